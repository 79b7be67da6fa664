import { z } from 'zod';
import { RefId, unique } from '../shared/fields.ts';
import {
  ALPN_TOKENS,
  isHostname,
  isHostOrIp,
  isRealityDest,
  NETWORKS,
  REALITY_FINGERPRINTS,
  REALITY_NETWORKS,
  SECURITIES,
  TLS_VERSIONS,
  XHTTP_MODES,
  x25519FromPrivate,
} from './stream.ts';

/**
 * The stream settings of an inbound profile as every surface accepts them: each field's rule
 * and default, the rules that span the stream's fields, and the settings of the chosen network
 * filled in when absent. The component ids are the OpenAPI document's names.
 */

const Path = z
  .string()
  .min(1)
  .max(256)
  .refine((p) => p.startsWith('/'), 'must start with /')
  .meta({ example: '/ws' });
const Host = z
  .string()
  .max(253)
  .refine((h) => h === '' || isHostOrIp(h), 'must be a host name or an IP address');

const TcpSettings = z
  .object({ accept_proxy_protocol: z.boolean().default(false) })
  .strict()
  .meta({ id: 'TcpSettings' });

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const WsSettings = z
  .object({
    path: Path.default('/'),
    headers: z
      .record(z.string().min(1).max(64), z.string().max(1024))
      .superRefine((headers, ctx) => {
        const names = Object.keys(headers);
        if (names.length > 32) ctx.addIssue({ code: 'custom', message: 'at most 32 headers' });
        for (const name of names)
          if (!HEADER_NAME.test(name)) ctx.addIssue({ code: 'custom', message: 'not a valid header name', path: [name] });
      })
      .default({}),
  })
  .strict()
  .meta({ id: 'WsSettings' });

const GrpcSettings = z
  .object({
    service_name: z
      .string()
      .min(1)
      .max(128)
      .regex(/^[A-Za-z0-9._\-/]+$/, 'letters, digits, . _ - /'),
    multi_mode: z.boolean().default(false),
  })
  .strict()
  .meta({ id: 'GrpcSettings' });

const HttpUpgradeSettings = z
  .object({ path: Path.default('/'), host: Host.default('') })
  .strict()
  .meta({ id: 'HttpUpgradeSettings' });

const XhttpSettings = z
  .object({ path: Path.default('/'), host: Host.default(''), mode: z.enum(XHTTP_MODES).default('auto') })
  .strict()
  .meta({ id: 'XhttpSettings' });

/** The settings a network runs with when its object is absent (grpc has none: it needs a service name). */
const NETWORK_DEFAULTS = {
  tcp: () => TcpSettings.parse({}),
  ws: () => WsSettings.parse({}),
  httpupgrade: () => HttpUpgradeSettings.parse({}),
  xhttp: () => XhttpSettings.parse({}),
} as const;

const ServerNameList = z.array(
  z
    .string()
    .trim()
    .min(1)
    .max(253)
    .refine((n) => isHostname(n), 'must be a host name'),
);

const TlsSettings = z
  .object({
    server_names: ServerNameList.max(100).transform(unique).default([]),
    alpn: z
      .string()
      .max(64)
      .refine(
        (alpn) => alpn === '' || alpn.split(',').every((a) => ALPN_TOKENS.includes(a.trim())),
        'comma-separated list of h3, h2, http/1.1',
      )
      .transform((alpn) =>
        alpn
          .split(',')
          .map((a) => a.trim())
          .filter(Boolean)
          .join(','),
      )
      .default('')
      .meta({ description: 'comma-separated: h3, h2, http/1.1; empty: the engine default' }),
    min_version: z.enum(TLS_VERSIONS).default('1.2'),
    certificate_id: RefId.meta({ description: 'an uploaded certificate (GET /certificates)' }),
  })
  .strict()
  .meta({ id: 'TlsSettings' });

const RealitySettingsInput = z
  .object({
    dest: z
      .string()
      .min(1)
      .max(260)
      .refine(isRealityDest, 'host:port or a port (the site REALITY borrows the handshake of)')
      .meta({ example: 'www.example.com:443', description: 'the site whose handshake REALITY borrows' }),
    server_names: ServerNameList.min(1, 'at least one server name').max(100).transform(unique).meta({ description: 'at least one' }),
    private_key: z
      .string()
      .max(64)
      .transform((key, ctx) => {
        const pair = x25519FromPrivate(key);
        if (pair) return pair.privateKey;
        ctx.addIssue({ code: 'custom', message: 'not an X25519 private key (32 bytes, base64url)' });
        return z.NEVER;
      })
      .optional()
      .meta({
        writeOnly: true,
        description:
          'X25519 private key, base64url (as `xray x25519` prints it). Generated when absent; on PATCH the current key is kept when absent. Never returned.',
      }),
    public_key: z.string().max(64).optional().meta({ description: 'derived from the private key; when sent it must match' }),
    short_ids: z
      .array(
        z
          .string()
          .trim()
          .max(16)
          .regex(/^([0-9a-f]{2}){0,8}$/, 'up to 16 hex digits, even length'),
      )
      .min(1, 'at least one short id')
      .max(16)
      .transform(unique)
      .optional()
      .meta({ description: 'hex, up to 16 digits, even length; default: one random 8-digit id (on PATCH: the current ids)' }),
    fingerprint: z.enum(REALITY_FINGERPRINTS).default('chrome').meta({ description: 'client fingerprint for links' }),
  })
  .strict()
  .meta({ id: 'RealitySettingsInput' });

export const StreamSettingsInput = z
  .object({
    network: z.enum(NETWORKS),
    security: z.enum(SECURITIES),
    tcp: TcpSettings.optional(),
    ws: WsSettings.optional(),
    grpc: GrpcSettings.optional(),
    httpupgrade: HttpUpgradeSettings.optional(),
    xhttp: XhttpSettings.optional(),
    tls: TlsSettings.optional(),
    reality: RealitySettingsInput.optional(),
  })
  .strict()
  .superRefine((s, ctx) => {
    // Runs beside the fields' own length and pattern issues, so a body learns every problem at
    // once (zod skips it after a wrong type or an unknown enum value; the guard below is for
    // callers that parse partial shapes).
    const issue = (field: string, message: string) => ctx.addIssue({ code: 'custom', message, path: [field] });
    if (!NETWORKS.includes(s.network) || !SECURITIES.includes(s.security)) return;
    for (const n of NETWORKS) if (n !== s.network && s[n] !== undefined) issue(n, `only allowed when stream.network is ${n}`);
    if (s.network === 'grpc' && s.grpc === undefined) issue('grpc', 'required when stream.network is grpc (service_name)');
    if (s.tls !== undefined && s.security !== 'tls') issue('tls', 'only allowed when stream.security is tls');
    if (s.reality !== undefined && s.security !== 'reality') issue('reality', 'only allowed when stream.security is reality');
    if (s.security === 'tls' && s.tls === undefined) issue('tls', 'required when stream.security is tls');
    if (s.security === 'reality' && s.reality === undefined) issue('reality', 'required when stream.security is reality');
    if (s.security === 'reality' && !REALITY_NETWORKS.includes(s.network))
      issue('security', `reality works only with ${REALITY_NETWORKS.join(', ')} (stream.network is ${s.network})`);
  })
  .transform((s): typeof s => {
    if (s.network === 'grpc' || s[s.network] !== undefined) return s;
    return { ...s, [s.network]: NETWORK_DEFAULTS[s.network]() };
  })
  .meta({
    id: 'StreamSettingsInput',
    description:
      'Only the settings object named by `network` may be present (it is filled with defaults when absent, except grpc which needs service_name); ' +
      '`tls` only with security tls (required then), `reality` only with security reality (required then). REALITY works with tcp, grpc and xhttp.',
  });

/** A stream as its schema leaves it: the chosen network's settings present and complete, every default filled. */
export type StreamSpec = z.output<typeof StreamSettingsInput>;
export type RealitySpec = z.output<typeof RealitySettingsInput>;
