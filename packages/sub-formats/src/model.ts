/**
 * What a subscription serves: the input of every renderer in this package. The HTTP route builds
 * it from the database; the renderers never read anything else (no clock, no environment), so the
 * same document always renders to the same bytes.
 */
export type Protocol = 'vless' | 'vmess' | 'trojan' | 'shadowsocks';

export interface ServerEntry {
  /** Display name (remark) shown in the app, e.g. "🇩🇪 Frankfurt · vless". Unique within a document. */
  name: string;
  protocol: Protocol;
  /** Where the client connects: inbound host, else node address (a chain entry: its first hop's). Host name, IPv4 or IPv6 (no brackets). */
  address: string;
  port: number;
  /** vless/vmess: uuid; vless: flow ('' or 'xtls-rprx-vision'); trojan: password; shadowsocks: method + password (already the full client password, e.g. '<serverkey>:<userkey>' for 2022 methods). */
  uuid?: string;
  flow?: string;
  password?: string;
  method?: string;
  stream: {
    network: 'tcp' | 'ws' | 'grpc' | 'httpupgrade' | 'xhttp';
    security: 'none' | 'tls' | 'reality';
    ws?: { path: string; host: string }; // host '' = none
    grpc?: { service_name: string; multi_mode: boolean };
    httpupgrade?: { path: string; host: string };
    xhttp?: { path: string; host: string; mode: 'auto' | 'packet_up' | 'stream_up' | 'stream_one' };
    tls?: { sni: string; alpn: string[]; fingerprint: string; allow_insecure: boolean }; // sni '' = none, fingerprint '' = none (e.g. 'chrome')
    reality?: { sni: string; public_key: string; short_id: string; fingerprint: string; spider_x: string };
  };
}

export type SubscriptionStatus = 'active' | 'limited' | 'expired' | 'disabled' | 'pending';

export interface SubscriptionDocument {
  /** Profile title (apps show it as the subscription's name). */
  title: string;
  status: SubscriptionStatus;
  upload_bytes: number;
  download_bytes: number;
  /** null = unlimited */
  total_bytes: number | null;
  /** null = never */
  expires_at: Date | null;
  /** Empty unless status is active. */
  servers: ServerEntry[];
}
