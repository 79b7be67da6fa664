/**
 * The stored form of an inbound profile's stream (inbound_profiles.stream, jsonb): what the
 * domain's stream schema leaves after parsing, with REALITY's derived public key and short ids
 * and without its private key (sealed in reality_private_key_enc). The domain checks at type
 * level that its schema's output is exactly this (inbound-profiles/stream.ts), so readers of the
 * column need no cast.
 */
export type StreamNetwork = 'tcp' | 'ws' | 'grpc' | 'httpupgrade' | 'xhttp';
export type StreamSecurity = 'none' | 'tls' | 'reality';

export interface StoredStream {
  network: StreamNetwork;
  security: StreamSecurity;
  tcp?: { accept_proxy_protocol: boolean };
  ws?: { path: string; headers: Record<string, string> };
  grpc?: { service_name: string; multi_mode: boolean };
  httpupgrade?: { path: string; host: string };
  xhttp?: { path: string; host: string; mode: 'auto' | 'packet_up' | 'stream_up' | 'stream_one' };
  tls?: { server_names: string[]; alpn: string; min_version: '1.0' | '1.1' | '1.2' | '1.3'; certificate_id: string };
  reality?: StoredReality;
}

export interface StoredReality {
  dest: string;
  server_names: string[];
  public_key: string;
  short_ids: string[];
  fingerprint: 'chrome' | 'firefox' | 'safari' | 'ios' | 'android' | 'edge' | '360' | 'qq' | 'random' | 'randomized';
}
