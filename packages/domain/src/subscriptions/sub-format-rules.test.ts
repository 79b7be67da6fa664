import { describe, expect, it } from 'vitest';
import {
  chooseSubFormat,
  DEFAULT_SUB_FORMAT_RULES,
  subErrorAnswer,
  subFormatPatternError,
  USER_AGENT_MATCH_LIMIT,
} from './sub-format-rules.ts';

// Issue 12.2: an admin's pattern runs on every customer's User-Agent, so it must run in linear
// time. With a backtracking engine the first case below does not finish (2^n steps): the test
// then fails by its timeout, which is the point, not a timing assertion.
describe('User-Agent patterns run in linear time on customer input', () => {
  it('the catastrophic pattern ^(a|a)*$ is accepted and decided at once on hostile User-Agents', () => {
    expect(subFormatPatternError('^(a|a)*$')).toBeNull();
    const rules = [{ user_agent: '^(a|a)*$', format: 'clash-meta' as const }];
    for (const n of [27, 60, USER_AGENT_MATCH_LIMIT - 1]) {
      expect(chooseSubFormat(rules, `${'a'.repeat(n)}!`, undefined)).toBe('base64');
      expect(chooseSubFormat(rules, 'a'.repeat(n), undefined)).toBe('clash-meta');
    }
    expect(chooseSubFormat([{ user_agent: '(x+x+)+y', format: 'sing-box' }], 'x'.repeat(100_000), undefined)).toBe('base64');
  });

  it('what only a backtracking engine can run (back-references, lookahead, lookbehind) is refused when saved', () => {
    for (const pattern of ['(a)\\1', '^(?=clash)', '(?!x)y', '(?<=a)b', '(?<!a)b']) {
      expect(subFormatPatternError(pattern), pattern).toMatch(/^not a linear-time \(RE2\) regular expression/);
    }
    expect(subFormatPatternError('^(unclosed')).toMatch(/missing closing \)/);
    expect(subFormatPatternError('x'.repeat(201))).toBe('between 1 and 200 characters');
  });

  it('only the first USER_AGENT_MATCH_LIMIT characters of a User-Agent are looked at', () => {
    const rules = [{ user_agent: 'clash', format: 'clash-meta' as const }];
    expect(chooseSubFormat(rules, `${'x'.repeat(USER_AGENT_MATCH_LIMIT - 5)}clash`, undefined)).toBe('clash-meta');
    expect(chooseSubFormat(rules, `${'x'.repeat(USER_AGENT_MATCH_LIMIT)}clash`, undefined)).toBe('base64');
  });

  it('the defaults still pick what the apps import, case-insensitively', () => {
    const pick = (ua: string) => chooseSubFormat(DEFAULT_SUB_FORMAT_RULES, ua, undefined);
    expect(pick('clash-verge/v2.2.3')).toBe('clash-meta');
    expect(pick('ClashMetaForAndroid/2.11.5')).toBe('clash-meta');
    expect(pick('SFA/1.11.4')).toBe('sing-box');
    expect(pick('HiddifyNext/2.5.7')).toBe('sing-box');
    expect(pick('Hiddify/2.0')).toBe('base64');
    expect(pick('v2rayNG/1.9.30')).toBe('base64');
    expect(chooseSubFormat(DEFAULT_SUB_FORMAT_RULES, 'Mozilla/5.0', 'text/html,*/*')).toBe('html');
  });
});

// Issue 28 item 10: a browser that opens an unknown or old link gets a page, an app the problem.
describe('an error of a link is a page for a browser and the problem document for an app', () => {
  const answer = (ua: string | undefined, accept: string | undefined) => subErrorAnswer(DEFAULT_SUB_FORMAT_RULES, ua, accept);
  const CHROME = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36';

  it('any Accept that lists text/html or XHTML with q above 0 is a browser’s, whatever the User-Agent', () => {
    expect(answer(CHROME, 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8')).toBe('page');
    expect(answer('curl/8.5.0', 'text/html')).toBe('page');
    expect(answer(undefined, 'application/json;q=0.9, TEXT/HTML;q=0.5')).toBe('page');
    expect(answer(undefined, 'application/xhtml+xml')).toBe('page');
  });

  it('no text/html (or q=0), no Accept, or */* only: the problem document', () => {
    for (const accept of [undefined, '', '*/*', 'application/json', 'text/plain, */*', 'text/html;q=0', 'text/htmlx'])
      expect(answer(CHROME, accept), String(accept)).toBe('problem');
  });

  it('a User-Agent a rule names is an app even with a browser’s Accept, unless its rule sends it the page', () => {
    expect(answer('v2rayNG/1.9.30', 'text/html,*/*')).toBe('problem');
    expect(answer('clash-verge/v2.2.3', 'text/html')).toBe('problem');
    expect(subErrorAnswer([{ user_agent: '^kiosk', format: 'html' }], 'Kiosk/1.0', undefined)).toBe('page');
  });
});
