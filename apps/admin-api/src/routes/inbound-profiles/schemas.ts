import { z } from '@hono/zod-openapi';
import { INBOUND_PROFILE_VALUES as V } from '@svc/domain';

const Timestamp = z.string().openapi({ format: 'date-time' });
export const Protocol = z.enum(V.protocols);
const Network = z.enum(V.networks);
const Security = z.enum(V.securities);

const RealityView = z
  .object({
    dest: z.string(),
    server_names: z.array(z.string()),
    public_key: z.string(),
    short_ids: z.array(z.string()),
    fingerprint: z.enum(V.realityFingerprints),
    has_private_key: z.boolean(),
  })
  .openapi('RealitySettings');

const StreamView = z
  .object({
    network: Network,
    security: Security,
    tcp: z.object({ accept_proxy_protocol: z.boolean() }).optional(),
    ws: z.object({ path: z.string(), headers: z.record(z.string(), z.string()) }).optional(),
    grpc: z.object({ service_name: z.string(), multi_mode: z.boolean() }).optional(),
    httpupgrade: z.object({ path: z.string(), host: z.string() }).optional(),
    xhttp: z.object({ path: z.string(), host: z.string(), mode: z.enum(V.xhttpModes) }).optional(),
    tls: z
      .object({ server_names: z.array(z.string()), alpn: z.string(), min_version: z.enum(V.tlsVersions), certificate_id: z.string() })
      .optional(),
    reality: RealityView.optional(),
  })
  .openapi('StreamSettings');

const SniffDest = z.enum(V.sniffDests);
const Sniffing = z.object({ enabled: z.boolean(), dest_override: z.array(SniffDest), route_only: z.boolean() }).openapi('Sniffing');

export const InboundProfileSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    protocol: Protocol,
    stream: StreamView,
    sniffing: Sniffing,
    vless_flow: z.string().nullable(),
    shadowsocks_method: z.string().nullable(),
    block_bittorrent: z.boolean(),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .openapi('InboundProfile');
