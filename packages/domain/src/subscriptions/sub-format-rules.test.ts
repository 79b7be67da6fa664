import { describe, expect, it } from 'vitest';
import { chooseSubFormat, DEFAULT_SUB_FORMAT_RULES, subFormatPatternError, USER_AGENT_MATCH_LIMIT } from './sub-format-rules.ts';

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
