import type { Migration } from 'kysely';
import * as foundation from './2026-11-21T0900-foundation.ts';
import * as fleet from './2026-11-21T1000-fleet.ts';
import * as pki from './2026-11-21T1100-pki.ts';
import * as gateway from './2026-11-21T1200-agent-gateway.ts';
import * as ssServerKey from './2026-11-21T1300-shadowsocks-server-key.ts';
import * as usageFillfactor from './2026-11-21T1400-usage-fillfactor.ts';
import * as settings from './2026-11-21T1500-settings.ts';
import * as periodTraffic from './2026-11-21T1600-period-traffic.ts';
import * as adminSignInState from './2026-11-21T1700-admin-sign-in-state.ts';
import * as servedGrace from './2026-11-21T1710-served-grace.ts';
import * as portalSignIn from './2026-11-24T0900-portal-sign-in.ts';
import * as webhooks from './2026-11-24T1000-webhooks.ts';
import * as billing from './2026-11-24T1100-billing.ts';
import * as acmeRegistration from './2026-11-24T1200-acme-registration.ts';
import * as certificateExpiry from './2026-11-24T1300-certificate-expiry.ts';
import * as acmeIssuance from './2026-11-24T1400-acme-issuance.ts';
import * as nodeApplyFailures from './2026-11-28T1700-node-apply-failures.ts';
import * as oauthBrowserBinding from './2026-11-29T1300-oauth-browser-binding.ts';
import * as clientSignInHardening from './2026-11-29T1400-client-sign-in-hardening.ts';
import * as registrationBrowser from './2026-11-29T1500-registration-browser.ts';
import * as listSearch from './2026-11-29T1600-list-search.ts';
import * as agentUpgrades from './2026-11-29T1700-agent-upgrades.ts';
import * as planDescription from './2026-11-29T1800-plan-description.ts';
import * as imports from './2026-11-30T0900-imports.ts';
import * as startOnFirstUse from './2026-11-30T1000-start-on-first-use.ts';
import * as importLinkKeys from './2026-11-30T1100-import-link-keys.ts';
import * as importedInboundProfiles from './2026-11-30T1200-imported-inbound-profiles.ts';
import * as importJobs from './2026-11-30T1300-import-jobs.ts';
import * as apiTokens from './2026-11-30T1400-api-tokens.ts';
import * as nodeTraffic from './2026-11-30T1500-node-traffic.ts';
import * as eventCatalogue from './2026-11-30T1600-event-catalogue.ts';
import * as bulkJobs from './2026-11-30T1700-bulk-jobs.ts';
import * as limits from './2026-12-01T1000-limits.ts';
import * as devices from './2026-12-01T1100-devices.ts';
import * as limitsWithoutSequences from './2026-12-01T1200-limits-without-sequences.ts';
import * as creditsStayHot from './2026-12-02T1000-credits-stay-hot.ts';
import * as hourlyRowsWithoutFkCheck from './2026-12-02T1100-hourly-rows-without-fk-check.ts';
import * as usageInbox from './2026-12-02T1200-usage-inbox.ts';
import * as usageInboxParts from './2026-12-02T1300-usage-inbox-parts.ts';
import * as subscriptionCounters from './2026-12-02T1400-subscription-counters.ts';
import * as subscriptionsCreditIndex from './2026-12-02T1500-subscriptions-credit-index.ts';
import * as subscriptionMemberHash from './2026-12-02T1600-subscription-member-hash.ts';
import * as memberDigestIndex from './2026-12-02T1700-member-digest-index.ts';

/** Every migration, registered explicitly, in order. Names never change once released. */
export const migrations: Record<string, Migration> = {
  '2026-11-21T0900-foundation': foundation,
  '2026-11-21T1000-fleet': fleet,
  '2026-11-21T1100-pki': pki,
  '2026-11-21T1200-agent-gateway': gateway,
  '2026-11-21T1300-shadowsocks-server-key': ssServerKey,
  '2026-11-21T1400-usage-fillfactor': usageFillfactor,
  '2026-11-21T1500-settings': settings,
  '2026-11-21T1600-period-traffic': periodTraffic,
  '2026-11-21T1700-admin-sign-in-state': adminSignInState,
  '2026-11-21T1710-served-grace': servedGrace,
  '2026-11-24T0900-portal-sign-in': portalSignIn,
  '2026-11-24T1000-webhooks': webhooks,
  '2026-11-24T1100-billing': billing,
  '2026-11-24T1200-acme-registration': acmeRegistration,
  '2026-11-24T1300-certificate-expiry': certificateExpiry,
  '2026-11-24T1400-acme-issuance': acmeIssuance,
  '2026-11-28T1700-node-apply-failures': nodeApplyFailures,
  '2026-11-29T1300-oauth-browser-binding': oauthBrowserBinding,
  '2026-11-29T1400-client-sign-in-hardening': clientSignInHardening,
  '2026-11-29T1500-registration-browser': registrationBrowser,
  '2026-11-29T1600-list-search': listSearch,
  '2026-11-29T1700-agent-upgrades': agentUpgrades,
  '2026-11-29T1800-plan-description': planDescription,
  '2026-11-30T0900-imports': imports,
  '2026-11-30T1000-start-on-first-use': startOnFirstUse,
  '2026-11-30T1100-import-link-keys': importLinkKeys,
  '2026-11-30T1200-imported-inbound-profiles': importedInboundProfiles,
  '2026-11-30T1300-import-jobs': importJobs,
  '2026-11-30T1400-api-tokens': apiTokens,
  '2026-11-30T1500-node-traffic': nodeTraffic,
  '2026-11-30T1600-event-catalogue': eventCatalogue,
  '2026-11-30T1700-bulk-jobs': bulkJobs,
  '2026-12-01T1000-limits': limits,
  '2026-12-01T1100-devices': devices,
  '2026-12-01T1200-limits-without-sequences': limitsWithoutSequences,
  '2026-12-02T1000-credits-stay-hot': creditsStayHot,
  '2026-12-02T1100-hourly-rows-without-fk-check': hourlyRowsWithoutFkCheck,
  '2026-12-02T1200-usage-inbox': usageInbox,
  '2026-12-02T1300-usage-inbox-parts': usageInboxParts,
  '2026-12-02T1400-subscription-counters': subscriptionCounters,
  '2026-12-02T1500-subscriptions-credit-index': subscriptionsCreditIndex,
  '2026-12-02T1600-subscription-member-hash': subscriptionMemberHash,
  '2026-12-02T1700-member-digest-index': memberDigestIndex,
};
