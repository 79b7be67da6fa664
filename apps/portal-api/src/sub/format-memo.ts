import { chooseSubFormat, type SubFormat, type SubLinkSettings, USER_AGENT_MATCH_LIMIT } from '@svc/domain';

/** Distinct User-Agent and Accept pairs kept per settings; past this the memo starts over. */
const MAX_ENTRIES = 1000;
/** Longer Accept headers are not kept (the format is chosen each time). */
const MAX_ACCEPT = 256;

const memos = new WeakMap<SubLinkSettings, Map<string, SubFormat>>();

/**
 * chooseSubFormat (the domain's rule) for the settings' rules, remembered per User-Agent and
 * Accept: apps send a handful of User-Agents, and the rules (RE2 automata) need not run again
 * for each refresh. The memo lives as long as the settings object (a change of the rules is
 * a new one) and holds a bounded number of pairs, so random User-Agents cannot fill it.
 */
export function subFormatFor(settings: SubLinkSettings, userAgent: string | undefined, accept: string | undefined): SubFormat {
  if (accept !== undefined && accept.length > MAX_ACCEPT) return chooseSubFormat(settings.format_rules, userAgent, accept);
  // The rule reads only this much of the User-Agent; absent and empty choose alike.
  const ua = (userAgent ?? '').slice(0, USER_AGENT_MATCH_LIMIT);
  const key = accept ? `${ua}\n${accept}` : ua;
  let memo = memos.get(settings);
  if (!memo) {
    memo = new Map();
    memos.set(settings, memo);
  }
  let format = memo.get(key);
  if (format === undefined) {
    format = chooseSubFormat(settings.format_rules, ua, accept);
    if (memo.size >= MAX_ENTRIES) memo.clear();
    memo.set(key, format);
  }
  return format;
}
