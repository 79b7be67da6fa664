import { type DomainDeps, isDomainError, parseDeviceHeaders, registerDeviceFetch } from '@svc/domain';
import { type AppEnv, problemResponse } from '@svc/http';
import { PLACEHOLDER_NAMES, placeholderServer, type SubscriptionDocument } from '@svc/sub-formats';
import type { Context } from 'hono';

/** What the app is told when its device is one too many (Happ shows `announce`; docs/subscription-link.md). */
export const OVER_LIMIT_MESSAGE =
  'You have reached the maximum number of devices for this subscription. Remove one in your account to add this one.';

/**
 * Headers of the over-limit answer, as apps that send x-hwid read them: `x-hwid-limit` (v2RayTun),
 * `x-hwid-max-devices-reached` and `x-hwid-active` (Remnawave's names, which Happ and others
 * know), `announce` (Happ and v2RayTun show it; `base64:` keeps any text intact).
 */
export const OVER_LIMIT_HEADERS: Readonly<Record<string, string>> = {
  'x-hwid-active': 'true',
  'x-hwid-limit': 'true',
  'x-hwid-max-devices-reached': 'true',
  announce: `base64:${Buffer.from(OVER_LIMIT_MESSAGE, 'utf8').toString('base64')}`,
};

/** The one entry the over-limit document holds (a valid profile naming why, which carries nothing). */
const OVER_LIMIT_SERVERS = [placeholderServer(PLACEHOLDER_NAMES.devices)];

/** The document a device over the limit gets: its usage and expiry as ever, and no server. */
export function overDeviceLimit(doc: SubscriptionDocument): SubscriptionDocument {
  return doc.status === 'active' ? { ...doc, servers: OVER_LIMIT_SERVERS } : doc;
}

/**
 * The device a link fetch names (x-hwid and its companions): registered or refreshed (null, or
 * 'over_limit' when it is new and the subscription's device limit is reached: nothing is
 * registered). A hostile header value is a 400 problem naming the header, nothing recorded.
 * A fetch without x-hwid: undefined, answered as ever.
 */
export async function deviceOf(
  c: Context<AppEnv>,
  deps: DomainDeps,
  subscriptionId: string,
): Promise<Response | 'over_limit' | 'ok' | undefined> {
  let device: ReturnType<typeof parseDeviceHeaders>;
  try {
    device = parseDeviceHeaders((name) => c.req.header(name));
  } catch (err) {
    if (isDomainError(err) && err.type === 'validation') return problemResponse(c, 'validation', err.message, err.errors ?? {});
    throw err;
  }
  if (!device) return undefined;
  const fetched = await registerDeviceFetch(deps, subscriptionId, device);
  return fetched.outcome === 'over_limit' ? 'over_limit' : 'ok';
}
