import type { OutboundPort } from '@svc/domain';
import { createOutboundClient, type HostLookup } from '@svc/outbound';

/**
 * An outbound client for tests that call adapters without a runtime: the real client (policy,
 * pinning, limits), private networks allowed unless said otherwise (the stand-ins are on 127.0.0.1).
 */
export function testOutbound(opts: { allowPrivateNetworks?: boolean; lookup?: HostLookup } = {}): OutboundPort {
  return createOutboundClient({ policy: () => ({ allowPrivateNetworks: opts.allowPrivateNetworks ?? true }), lookup: opts.lookup });
}
