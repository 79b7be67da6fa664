/**
 * The vendor clients, outside the domain (issue 33): payment providers, DNS providers (DNS-01) and
 * OAuth/OpenID Connect providers and the ACME protocol client,
 * each speaking a vendor's API behind a port
 * the domain declares, through the outbound client it is given. The runtime builds `vendors`
 * from here and hands them to the domain (DomainDeps.vendors); a new provider is one new file
 * here, tested against its stand-in without a database.
 */
import type { OAuthProviderConfig } from '@svc/config';
import type { OAuthProviderAdapter, Vendors } from '@svc/domain';
import { acmeProtocol } from './acme/acme-protocol.ts';
import { dnsProviderPort } from './dns/registry.ts';
import { oauthProviderAdapter } from './oauth/registry.ts';
import { paymentProviderAdapter } from './payments/registry.ts';

export * from './acme/acme-protocol.ts';
export * from './dns/authoritative-visibility.ts';
export * from './dns/cloudflare-client.ts';
export * from './dns/digitalocean-client.ts';
export { DNS_API_MAX_BYTES, DNS_API_TIMEOUT_MS, type HostedDnsDeps } from './dns/hosted-dns-api.ts';
export * from './dns/registry.ts';
export * from './dns/rfc2136-client.ts';
export * from './dns/rfc2136-message.ts';
export * from './dns/route53-client.ts';
export * from './dns/route53-xml.ts';
export * from './dns/sigv4.ts';
export * from './oauth/github-adapter.ts';
export * from './oauth/oidc-adapter.ts';
export * from './oauth/registry.ts';
export * from './payments/cryptobot-adapter.ts';
export * from './payments/cryptobot-signature.ts';
export * from './payments/cryptobot-status.ts';
export * from './payments/idempotency.ts';
export * from './payments/manual-adapter.ts';
export * from './payments/provider-http.ts';
export * from './payments/registry.ts';
export * from './payments/stripe-adapter.ts';
export * from './payments/stripe-signature-time.ts';
export * from './payments/stripe-status.ts';
export * from './payments/webhook-input.ts';
export * from './payments/yookassa-adapter.ts';
export * from './payments/yookassa-status.ts';

/**
 * Every family's factory, as the domain takes them, owned by one runtime: an OAuth adapter is
 * made once per configured provider (its discovered configuration kept with it) and kept here,
 * not in module state, so two runtimes in one process (the tests) share nothing.
 */
export function createVendors(): Vendors {
  const oauth = new WeakMap<OAuthProviderConfig, OAuthProviderAdapter>();
  return {
    paymentProvider: paymentProviderAdapter,
    dnsProvider: dnsProviderPort,
    oauthProvider: (name, config, fetch) => {
      let adapter = oauth.get(config);
      if (!adapter) {
        adapter = oauthProviderAdapter(name, config, fetch);
        oauth.set(config, adapter);
      }
      return adapter;
    },
    acme: acmeProtocol,
  };
}
