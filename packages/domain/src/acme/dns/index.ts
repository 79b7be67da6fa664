// DNS-01's port; its clients (RFC 2136 with TSIG, the Cloudflare, Route 53 and DigitalOcean APIs)
// are vendor clients in @svc/providers, handed to the domain as DomainDeps.vendors.dnsProvider.
export * from './dns-provider-port.ts';
