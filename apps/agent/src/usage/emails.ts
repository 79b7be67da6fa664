/**
 * What an engine user's email says about its traffic counters. The control plane names users
 * `<subscription_id>@svc` (a subscription: its traffic is usage) or `chain:<chain_id>:<pos>` (a
 * hop of a chain: transit traffic, never usage). Any other email did not come from the control
 * plane (a hand-edited config, a stray counter): it is ignored and counted, never guessed at.
 */
const SUFFIX = '@svc';
const CHAIN = /^chain:[^:]+:\d+$/;

/** The subscription id of a `<subscription_id>@svc` email, else undefined. */
export function subscriptionIdOf(email: string): string | undefined {
  if (email.length <= SUFFIX.length || !email.endsWith(SUFFIX)) return undefined;
  const id = email.slice(0, -SUFFIX.length);
  return id.includes('@') ? undefined : id;
}

export const isChainEmail = (email: string): boolean => CHAIN.test(email);
