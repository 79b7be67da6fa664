import { chooseSubFormat, type SubFormat, type SubLinkSettings, subErrorAnswer, USER_AGENT_MATCH_LIMIT } from '@svc/domain';

/** Distinct User-Agent and Accept pairs kept per settings; past this the memo starts over. */
const MAX_ENTRIES = 1000;
/** Longer Accept headers are not kept (the answer is chosen each time). */
const MAX_ACCEPT = 256;

type Choose<T> = (rules: SubLinkSettings['format_rules'], userAgent: string, accept: string | undefined) => T;

/**
 * A domain rule over the settings' User-Agent rules, remembered per User-Agent and Accept: apps
 * send a handful of User-Agents, and the rules (RE2 automata) need not run again for each
 * refresh. The memo lives as long as the settings object (a change of the rules is a new one)
 * and holds a bounded number of pairs, so random User-Agents cannot fill it.
 */
function memoized<T>(choose: Choose<T>) {
  const memos = new WeakMap<SubLinkSettings, Map<string, T>>();
  return (settings: SubLinkSettings, userAgent: string | undefined, accept: string | undefined): T => {
    // The rule reads only this much of the User-Agent; absent and empty choose alike.
    const ua = (userAgent ?? '').slice(0, USER_AGENT_MATCH_LIMIT);
    if (accept !== undefined && accept.length > MAX_ACCEPT) return choose(settings.format_rules, ua, accept);
    const key = accept ? `${ua}\n${accept}` : ua;
    let memo = memos.get(settings);
    if (!memo) {
      memo = new Map();
      memos.set(settings, memo);
    }
    let chosen = memo.get(key);
    if (chosen === undefined) {
      chosen = choose(settings.format_rules, ua, accept);
      if (memo.size >= MAX_ENTRIES) memo.clear();
      memo.set(key, chosen);
    }
    return chosen;
  };
}

/** The link's format for this request: chooseSubFormat (the domain's rule), remembered. */
export const subFormatFor: (settings: SubLinkSettings, userAgent: string | undefined, accept: string | undefined) => SubFormat =
  memoized(chooseSubFormat);

/** Whether an error of the link is answered with the page or the problem: subErrorAnswer (the domain's rule), remembered. */
export const subErrorAnswerFor: (
  settings: SubLinkSettings,
  userAgent: string | undefined,
  accept: string | undefined,
) => 'page' | 'problem' = memoized(subErrorAnswer);
