import { z } from '@hono/zod-openapi';
import { INBOUND_PROFILE_VALUES as V } from '@svc/domain';

const Timestamp = z.string().openapi({ format: 'date-time' });
const Path = z.string().min(1).max(256).openapi({ example: '/ws' });
const HostName = z.string().max(253);

export const Protocol = z.enum(V.protocols);
const Network = z.enum(V.networks);
const Security = z.enum(V.securities);

const TcpSettings = z
  .object({ accept_proxy_protocol: z.boolean().optional().openapi({ default: false }) })
  .strict()
  .openapi('TcpSettings');
const WsSettings = z
  .object({
    path: Path.optional().openapi({ default: '/' }),
    headers: z
      .record(z.string().min(1).max(64), z.string().max(1024))
      .refine((h) => Object.keys(h).length <= 32, 'at most 32 headers')
      .optional()
      .openapi({ default: {} }),
  })
  .strict()
  .openapi('WsSettings');
const GrpcSettings = z
  .object({
    service_name: z
      .string()
      .min(1)
      .max(128)
      .regex(/^[A-Za-z0-9._\-/]+$/, 'letters, digits, . _ - /'),
    multi_mode: z.boolean().optional().openapi({ default: false }),
  })
  .strict()
  .openapi('GrpcSettings');
const HttpUpgradeSettings = z
  .object({ path: Path.optional().openapi({ default: '/' }), host: HostName.optional().openapi({ default: '' }) })
  .strict()
  .openapi('HttpUpgradeSettings');
const XhttpSettings = z
  .object({
    path: Path.optional().openapi({ default: '/' }),
    host: HostName.optional().openapi({ default: '' }),
    mode: z.enum(V.xhttpModes).optional().openapi({ default: 'auto' }),
  })
  .strict()
  .openapi('XhttpSettings');
const ServerNames = z.array(z.string().min(1).max(253)).max(100);
const TlsSettings = z
  .object({
    server_names: ServerNames.optional().openapi({ default: [] }),
    alpn: z
      .string()
      .max(64)
      .optional()
      .openapi({ default: '', description: 'comma-separated: h3, h2, http/1.1; empty: the engine default' }),
    min_version: z.enum(V.tlsVersions).optional().openapi({ default: '1.2' }),
    certificate_id: z.string().min(1).max(64).openapi({ description: 'an uploaded certificate (GET /certificates)' }),
  })
  .strict()
  .openapi('TlsSettings');
const RealityInput = z
  .object({
    dest: z.string().min(1).max(260).openapi({ example: 'www.example.com:443', description: 'the site whose handshake REALITY borrows' }),
    server_names: ServerNames.openapi({ description: 'at least one' }),
    private_key: z.string().max(64).optional().openapi({
      writeOnly: true,
      description:
        'X25519 private key, base64url (as `xray x25519` prints it). Generated when absent; on PATCH the current key is kept when absent. Never returned.',
    }),
    public_key: z.string().max(64).optional().openapi({ description: 'derived from the private key; when sent it must match' }),
    short_ids: z
      .array(z.string().max(16))
      .max(16)
      .optional()
      .openapi({ description: 'hex, up to 16 digits, even length; default: one random 8-digit id (on PATCH: the current ids)' }),
    fingerprint: z.enum(V.realityFingerprints).optional().openapi({ default: 'chrome', description: 'client fingerprint for links' }),
  })
  .strict()
  .openapi('RealitySettingsInput');
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

export const StreamInput = z
  .object({
    network: Network,
    security: Security,
    tcp: TcpSettings.optional(),
    ws: WsSettings.optional(),
    grpc: GrpcSettings.optional(),
    httpupgrade: HttpUpgradeSettings.optional(),
    xhttp: XhttpSettings.optional(),
    tls: TlsSettings.optional(),
    reality: RealityInput.optional(),
  })
  .strict()
  .openapi('StreamSettingsInput', {
    description:
      'Only the settings object named by `network` may be present (it is filled with defaults when absent, except grpc which needs service_name); ' +
      '`tls` only with security tls (required then), `reality` only with security reality (required then). REALITY works with tcp, grpc and xhttp.',
  });

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
export const SniffingInput = z
  .object({
    enabled: z.boolean().optional().openapi({ default: true }),
    dest_override: z
      .array(SniffDest)
      .max(4)
      .optional()
      .openapi({ default: ['http', 'tls', 'quic'] }),
    route_only: z.boolean().optional().openapi({ default: false }),
  })
  .strict()
  .openapi('SniffingInput');
const Sniffing = z.object({ enabled: z.boolean(), dest_override: z.array(SniffDest), route_only: z.boolean() }).openapi('Sniffing');

export const VlessFlow = z.enum(V.vlessFlows).openapi({ description: 'vless over tcp with tls or reality only' });
export const ShadowsocksMethod = z.enum(V.shadowsocksMethods).openapi({ description: 'required for (and only for) shadowsocks' });
export const ProfileName = z.string().trim().min(1).max(100);

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
