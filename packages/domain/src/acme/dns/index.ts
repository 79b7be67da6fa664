// DNS-01: RFC 2136 dynamic update with TSIG, and the Cloudflare, Route 53 and DigitalOcean APIs.

export * from './authoritative-visibility.ts';
export * from './cloudflare-client.ts';
export * from './digitalocean-client.ts';
export * from './dns-provider-port.ts';
export { DNS_API_MAX_BYTES, DNS_API_TIMEOUT_MS, type HostedDnsDeps } from './hosted-dns-api.ts';
export * from './rfc2136-client.ts';
export * from './rfc2136-message.ts';
export * from './route53-client.ts';
export * from './route53-xml.ts';
export * from './sigv4.ts';
