/**
 * The format of InboundUser.email (spec 2.1): `<subscription_id>@svc` for a subscription's user
 * (its traffic is usage) or `chain:<chain_id>:<pos>` for a hop of a chain (transit traffic, never
 * usage). The control plane writes it (packages/desired-state), the agent reads it back from the
 * engine's counters; one rule for both sides. Any other email did not come from the control
 * plane (a hand-edited config, a stray counter): readers ignore it, never guess.
 */
const SUFFIX = '@svc';
const CHAIN = /^chain:[^:]+:\d+$/;

export const userEmail = (subscriptionId: string): string => `${subscriptionId}${SUFFIX}`;

export const chainEmail = (chainId: string, position: number): string => `chain:${chainId}:${position}`;

/** The subscription id of a `<subscription_id>@svc` email, else undefined. */
export function subscriptionIdOf(email: string): string | undefined {
  if (email.length <= SUFFIX.length || !email.endsWith(SUFFIX)) return undefined;
  const id = email.slice(0, -SUFFIX.length);
  return id.includes('@') ? undefined : id;
}

export const isChainEmail = (email: string): boolean => CHAIN.test(email);
