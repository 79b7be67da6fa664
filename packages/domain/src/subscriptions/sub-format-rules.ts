import { RE2JS } from 're2js';

/**
 * Which document GET /sub/{token} answers with, from the app's User-Agent (and, for
 * browsers, Accept). Rules are tried in order; the first whose pattern matches the
 * User-Agent (case-insensitive regular expression) decides. A browser (Accept prefers
 * text/html) gets the HTML page; an app no rule knows gets the base64 list, which every
 * client app imports.
 *
 * Patterns run on customer input, so they run in linear time: they are RE2 expressions
 * (re2js, a pure-JavaScript port of RE2: an automaton, no backtracking), never JavaScript
 * RegExps. `^(a|a)*$` is accepted and costs O(length) on any User-Agent; what needs
 * backtracking (back-references, lookahead/lookbehind) is refused when the rule is saved.
 * Only the first USER_AGENT_MATCH_LIMIT characters of a User-Agent are matched.
 */
export const SUB_FORMATS = ['base64', 'clash-meta', 'sing-box', 'xray-json', 'html'] as const;
export type SubFormat = (typeof SUB_FORMATS)[number];

export interface SubFormatRule {
  /** Case-insensitive RE2 regular expression searched for in the User-Agent. */
  user_agent: string;
  format: SubFormat;
}

/**
 * Defaults that cover the apps people use (their User-Agents as they send them):
 * - mihomo cores: clash-verge(-rev) "clash-verge/v2.x", Clash Meta for Android
 *   "ClashMetaForAndroid/2.x", "mihomo/1.19", "FlClash/0.8", "Stash/2.x", "clash.meta";
 * - sing-box cores: "SFA/1.x", "SFI/1.x", "SFM/1.x", "SFT/1.x", "sing-box 1.12", "Karing/1.x",
 *   "HiddifyNext/2.x" (Hiddify Next);
 * - share-link apps (v2rayN, v2rayNG, Shadowrocket, Streisand, Happ, Hiddify) and anything else:
 *   the base64 list (the fallback, so they need no rule).
 * Order matters: "Hiddify" alone must not catch "HiddifyNext", and "clash" rules precede.
 */
export const DEFAULT_SUB_FORMAT_RULES: readonly SubFormatRule[] = [
  { user_agent: '^(clash-verge|clash\\.meta|clashmeta|mihomo|flclash|stash|clash)', format: 'clash-meta' },
  { user_agent: '^(sfa|sfi|sfm|sft|sing-box|karing|hiddifynext|hiddify-next)', format: 'sing-box' },
  { user_agent: '^(v2rayn|v2rayng|shadowrocket|streisand|happ|hiddify|v2box|npvtunnel)', format: 'base64' },
];

/** Real apps send under 200 characters; what lies beyond this is never looked at. */
export const USER_AGENT_MATCH_LIMIT = 512;
/** Longest pattern a rule may have. */
export const SUB_FORMAT_PATTERN_MAX = 200;

/** The format for one request. Bad patterns never match (they are refused when saved). */
export function chooseSubFormat(rules: readonly SubFormatRule[], userAgent: string | undefined, accept: string | undefined): SubFormat {
  return explainSubFormat(rules, userAgent, accept).format;
}

/** Why a request gets its format: the rule that matched (its index), a browser's page, or the fallback list. */
export interface SubFormatChoice {
  format: SubFormat;
  rule_index: number | null;
  reason: 'rule' | 'browser' | 'fallback';
}

/** chooseSubFormat with its reason, for the settings' User-Agent tester (the same decision, one place). */
export function explainSubFormat(
  rules: readonly SubFormatRule[],
  userAgent: string | undefined,
  accept: string | undefined,
): SubFormatChoice {
  const ua = (userAgent ?? '').slice(0, USER_AGENT_MATCH_LIMIT);
  for (const [i, rule] of rules.entries()) {
    if (compiled(rule.user_agent)?.test(ua)) return { format: rule.format, rule_index: i, reason: 'rule' };
  }
  if (prefersHtml(accept) && /^mozilla\//i.test(ua)) return { format: 'html', rule_index: null, reason: 'browser' };
  return { format: 'base64', rule_index: null, reason: 'fallback' };
}

/**
 * How an error of GET /sub/{token} is answered (an unknown, rotated or malformed token, a
 * failure): `page` (an HTML page that says what to do) for a person in a browser, `problem`
 * (the problem+json document) for an app. A rule whose pattern matches names an app, unless
 * it sends that User-Agent the `html` page; otherwise an Accept that lists text/html or XHTML
 * (q above 0) is a browser's. Looser than chooseSubFormat's page (which also wants a
 * `Mozilla/` User-Agent): an app that gets an error page instead of the problem fails the
 * same way, a person shown raw JSON does not know what to do.
 */
export function subErrorAnswer(
  rules: readonly SubFormatRule[],
  userAgent: string | undefined,
  accept: string | undefined,
): 'page' | 'problem' {
  const ua = (userAgent ?? '').slice(0, USER_AGENT_MATCH_LIMIT);
  for (const rule of rules) {
    if (compiled(rule.user_agent)?.test(ua)) return rule.format === 'html' ? 'page' : 'problem';
  }
  return acceptsHtml(accept) ? 'page' : 'problem';
}

/**
 * Why a rule's pattern cannot be saved, or null: 1 to 200 characters, and an RE2 expression
 * (so no back-references or lookaround, which only a backtracking engine runs).
 */
export function subFormatPatternError(pattern: string): string | null {
  if (pattern.length === 0 || pattern.length > SUB_FORMAT_PATTERN_MAX) return `between 1 and ${SUB_FORMAT_PATTERN_MAX} characters`;
  try {
    compile(pattern);
    return null;
  } catch (err) {
    return `not a linear-time (RE2) regular expression: ${(err as Error).message.replace(/^error parsing regexp: /, '')}`;
  }
}

interface Matcher {
  test(input: string): boolean;
}

function compile(pattern: string): Matcher {
  const re = RE2JS.compile(pattern, RE2JS.CASE_INSENSITIVE);
  return { test: (input) => re.matcher(input).find() };
}

const cache = new Map<string, Matcher | null>();
function compiled(pattern: string): Matcher | null {
  let re = cache.get(pattern);
  if (re === undefined) {
    re = subFormatPatternError(pattern) ? null : compile(pattern);
    if (cache.size > 1000) cache.clear();
    cache.set(pattern, re);
  }
  return re;
}

/** Accept names text/html or XHTML with a q above 0 (anywhere in the list; a bare wildcard is not enough). */
function acceptsHtml(accept: string | undefined): boolean {
  if (!accept) return false;
  return accept.split(',').some((range) => {
    const [type, ...params] = range.split(';').map((p) => p.trim().toLowerCase());
    if (type !== 'text/html' && type !== 'application/xhtml+xml') return false;
    const q = params.find((p) => p.startsWith('q='));
    return q === undefined || Number(q.slice(2)) > 0;
  });
}

/** Accept lists text/html before any other type it names (what browsers send for a page). */
function prefersHtml(accept: string | undefined): boolean {
  if (!accept) return false;
  const first = accept.split(',')[0]?.split(';')[0]?.trim().toLowerCase();
  return first === 'text/html' || first === 'application/xhtml+xml';
}
