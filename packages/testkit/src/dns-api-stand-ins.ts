/**
 * Local stand-ins for the hosted DNS APIs DNS-01 uses (Cloudflare v4, Route 53 2013-04-01,
 * DigitalOcean v2), the subset our adapters call, answering as the providers document: their
 * envelopes, errors and authentication, Cloudflare's and DigitalOcean's one record per value,
 * Route 53's one set per name changed by atomic change batches. Each serves one zone held by a
 * real BIND (startBind) and applies every TXT change to it through our RFC 2136 adapter, so what
 * the adapters say is visible is asked of a real name server. The zone's name servers are
 * reported as `ns1.<zone>` and `ns2.<zone>`: the tests resolve them to 127.0.0.1 and ask BIND's
 * port (or send one elsewhere, to see that every name server must answer).
 */

export { type CloudflareStandIn, startCloudflareStandIn } from './cloudflare-stand-in.ts';
export { type DigitalOceanStandIn, startDigitalOceanStandIn } from './digitalocean-stand-in.ts';
export type { DnsApiRequest, DnsApiStandIn, RawAnswer } from './dns-api-stand-in-http.ts';
export { type Route53StandIn, startRoute53StandIn } from './route53-stand-in.ts';
