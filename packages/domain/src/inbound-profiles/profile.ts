import type { Db, InboundProfileRow, Protocol } from '@svc/db';
import { ValidationError } from '../errors.ts';
import { type CurrentReality, type RealitySettings, type ResolvedStream, resolveStream, type StoredStream } from './stream.ts';
import type { StreamSpec } from './stream-fields.ts';

export const PROTOCOLS = ['vless', 'vmess', 'trojan', 'shadowsocks'] as const;
export const VLESS_FLOWS = ['xtls-rprx-vision'] as const;
/**
 * The methods Xray's shadowsocks inbound serves to several users. 2022-blake3-chacha20-poly1305
 * is left out: Xray runs it for a single user only.
 */
export const SHADOWSOCKS_METHODS = [
  '2022-blake3-aes-128-gcm',
  '2022-blake3-aes-256-gcm',
  'aes-128-gcm',
  'aes-256-gcm',
  'chacha20-ietf-poly1305',
  'xchacha20-ietf-poly1305',
] as const;
export const SNIFF_DESTS = ['http', 'tls', 'quic', 'bittorrent'] as const;

export interface Sniffing {
  enabled: boolean;
  dest_override: (typeof SNIFF_DESTS)[number][];
  route_only: boolean;
}
export const DEFAULT_SNIFFING: Sniffing = { enabled: true, dest_override: ['http', 'tls', 'quic'], route_only: false };

/** A whole profile: a new one, or the merged result of a PATCH (whose stream may be the stored one). */
export interface ProfileFields {
  name: string;
  protocol: Protocol;
  stream: StreamSpec | StoredStream;
  sniffing: Sniffing;
  vless_flow: (typeof VLESS_FLOWS)[number] | null;
  shadowsocks_method: (typeof SHADOWSOCKS_METHODS)[number] | null;
  block_bittorrent: boolean;
}

export type RealityView = RealitySettings & { has_private_key: boolean };
export type StreamView = Omit<StoredStream, 'reality'> & { reality?: RealityView };

export interface InboundProfileView {
  id: string;
  name: string;
  protocol: Protocol;
  stream: StreamView;
  sniffing: Sniffing;
  vless_flow: string | null;
  shadowsocks_method: string | null;
  block_bittorrent: boolean;
  created_at: string;
  updated_at: string;
}

export function inboundProfileView(r: InboundProfileRow): InboundProfileView {
  const stored = r.stream;
  const stream: StreamView = { ...stored } as StreamView;
  if (stored.reality) stream.reality = { ...stored.reality, has_private_key: r.reality_private_key_enc !== null };
  return {
    id: r.id,
    name: r.name,
    protocol: r.protocol,
    stream,
    sniffing: r.sniffing as Sniffing,
    vless_flow: r.vless_flow,
    shadowsocks_method: r.shadowsocks_method,
    block_bittorrent: r.block_bittorrent,
    created_at: r.created_at.toISOString(),
    updated_at: r.updated_at.toISOString(),
  };
}

/**
 * The rules of a whole profile (create, or the merged result of a PATCH, so they cannot live
 * in the input schemas): the REALITY key, the ones where Xray is strict about protocol and
 * transport, then references. Throws one ValidationError carrying every field's reason.
 */
export async function resolveProfile(trx: Db, p: ProfileFields, current: CurrentReality): Promise<ResolvedStream> {
  const { errors, resolved } = resolveStream(p.stream, current);

  if (p.vless_flow !== null) {
    if (p.protocol !== 'vless') errors.vless_flow = 'only for protocol vless';
    else if (p.stream.network !== 'tcp' || p.stream.security === 'none')
      errors.vless_flow = `${p.vless_flow} needs network tcp with security tls or reality`;
  }
  if (p.protocol === 'shadowsocks' && p.shadowsocks_method === null) errors.shadowsocks_method = 'required for protocol shadowsocks';
  if (p.protocol !== 'shadowsocks' && p.shadowsocks_method !== null) errors.shadowsocks_method = 'only for protocol shadowsocks';
  if (p.block_bittorrent && !p.sniffing.enabled) errors.block_bittorrent = 'needs sniffing.enabled (bittorrent is recognised by sniffing)';

  const certificateId = p.stream.security === 'tls' ? p.stream.tls?.certificate_id : undefined;
  if (certificateId !== undefined) {
    const cert = await trx.selectFrom('certificates').select(['id', 'key_pem_enc']).where('id', '=', certificateId).executeTakeFirst();
    if (!cert) errors['stream.tls.certificate_id'] = 'no such certificate';
    else if (cert.key_pem_enc === null) errors['stream.tls.certificate_id'] = 'the certificate has no key yet';
  }
  if (Object.keys(errors).length > 0 || !resolved) throw new ValidationError('invalid inbound profile', errors);
  return resolved;
}
