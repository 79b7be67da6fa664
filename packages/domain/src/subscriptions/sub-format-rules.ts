/**
 * Which document GET /sub/{token} answers with, from the app's User-Agent (and, for
 * browsers, Accept). Rules are tried in order; the first whose pattern matches the
 * User-Agent (case-insensitive regular expression) decides. A browser (Accept prefers
 * text/html) gets the HTML page; an app no rule knows gets the base64 list, which every
 * client app imports.
 */
export const SUB_FORMATS = ['base64', 'clash-meta', 'sing-box', 'xray-json', 'html'] as const;
export type SubFormat = (typeof SUB_FORMATS)[number];

export interface SubFormatRule {
  /** Case-insensitive regular expression tested against the User-Agent. */
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

/** The format for one request. Bad patterns never match (they are refused when saved). */
export function chooseSubFormat(rules: readonly SubFormatRule[], userAgent: string | undefined, accept: string | undefined): SubFormat {
  const ua = userAgent ?? '';
  for (const rule of rules) {
    if (compiled(rule.user_agent)?.test(ua)) return rule.format;
  }
  if (prefersHtml(accept) && /^mozilla\//i.test(ua)) return 'html';
  return 'base64';
}

/** Whether a rule's pattern is a usable regular expression (checked when rules are saved). */
export function subFormatPatternError(pattern: string): string | null {
  if (pattern.length === 0 || pattern.length > 200) return 'between 1 and 200 characters';
  try {
    new RegExp(pattern, 'i');
    return null;
  } catch (err) {
    return `not a regular expression: ${(err as Error).message}`;
  }
}

const cache = new Map<string, RegExp | null>();
function compiled(pattern: string): RegExp | null {
  let re = cache.get(pattern);
  if (re === undefined) {
    re = subFormatPatternError(pattern) ? null : new RegExp(pattern, 'i');
    if (cache.size > 1000) cache.clear();
    cache.set(pattern, re);
  }
  return re;
}

/** Accept lists text/html before any other type it names (what browsers send for a page). */
function prefersHtml(accept: string | undefined): boolean {
  if (!accept) return false;
  const first = accept.split(',')[0]?.split(';')[0]?.trim().toLowerCase();
  return first === 'text/html' || first === 'application/xhtml+xml';
}
