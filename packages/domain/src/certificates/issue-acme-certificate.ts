import { setTimeout as sleep } from 'node:timers/promises';
import type { CertificateRow } from '@svc/db';
import { caSays } from '../acme/acme-port.ts';
import type { DnsProviderPort } from '../acme/dns/dns-provider-port.ts';
import { ACME_REGISTRATION_DEADLINE_MS, registerAcmeAccount } from '../acme/register-acme-account.ts';
import { storedDnsProviderPort } from '../acme/stored-dns-provider.ts';
import { isDomainError, TimeoutError, UnavailableError } from '../errors.ts';
import { recordEvent } from '../events/record-event.ts';
import { bumpNodeRevisions, nodesOfCertificate } from '../fleet/revisions.ts';
import type { DomainContext } from '../shared/context.ts';
import { unitOfWork } from '../shared/unit-of-work.ts';
import { rollOutCertificate } from './certificate-rollouts.ts';
import { dueForIssuance } from './issuance-due.ts';
import { parseCertificateMaterial } from './pem.ts';
import { claimStaleMs, nextRenewalAt, retryAfterMs } from './renewal-rule.ts';

export type IssueOutcome = 'issued' | 'renewed' | 'failed' | 'not due';

export interface IssueOptions {
  /** How often the authoritative servers are asked whether a TXT value shows (default 2 s). */
  pollMs?: number | undefined;
  /** The whole attempt (registration included) gives up after this long; default issuanceDeadlineMs. */
  deadlineMs?: number | undefined;
  /** The account's registration, when it runs first, gives up after this long (within the attempt's deadline). */
  registrationDeadlineMs?: number | undefined;
  /** Per request to the CA; default the ACME client's (30 s). */
  requestTimeoutMs?: number | undefined;
}

/**
 * How long one attempt may take: a minute less than the age at which its claim is taken over
 * (claimStaleMs), so an attempt is over, and its slot free, before another worker could start
 * the same order; the propagation wait is inside it.
 */
export const issuanceDeadlineMs = (propagationTimeoutSeconds: number): number => claimStaleMs(propagationTimeoutSeconds) - 60_000;

/**
 * The worker's `certificates.issue` {id}: one attempt to issue (or renew) an ACME certificate
 * over DNS-01, if one is due (issue 16 item 3; docs/certificates.md):
 * 1. a claim (issuing_since; a claim older than 15 minutes is taken over), so two workers never
 *    order the same certificate at once and a crashed attempt is tried again;
 * 2. the account registered if it is not yet (registerAcmeAccount); the order placed through
 *    acme-client; each TXT value published through the DNS provider and waited for at the
 *    zone's authoritative servers (acme.propagation_timeout_seconds), then removed;
 * 3. success: the new material (checked like uploaded material), status `issued`, the renewal
 *    due 30 days before expiry (renewal-rule.ts), and every node serving TLS with it a new
 *    revision; a failure: the error kept in last_error, the next attempt after a backoff, and
 *    the material that was serving left as it was (a failed renewal changes no node).
 * Both are audited and announced (certificate.issued / certificate.issue_failed). A failure is
 * recorded, not thrown: the retry is the backoff's (a CA limits failed validations). Every
 * request to the CA and the DNS provider goes through the outbound client (the destination
 * policy; docs/certificates.md), and the attempt gives up at its deadline (issuanceDeadlineMs)
 * with that as its error, freeing its slot.
 */
export async function issueAcmeCertificate(ctx: DomainContext, id: string, opts: IssueOptions = {}): Promise<IssueOutcome> {
  const claimedAt = ctx.clock.now();
  const row = await ctx.db
    .updateTable('certificates')
    .set({ issuing_since: claimedAt, last_attempt_at: claimedAt })
    .where('id', '=', id)
    .where(dueForIssuance(claimedAt, ctx.config.acme.propagation_timeout_seconds))
    .returningAll()
    .executeTakeFirst();
  if (!row) return 'not due';
  const renewal = row.cert_pem !== null;
  ctx.log.info({ certificate_id: id, domains: row.domains, renewal }, renewal ? 'renewing ACME certificate' : 'issuing ACME certificate');
  let material: { chainPem: string; keyPem: string };
  try {
    material = await order(ctx, row, opts);
  } catch (err) {
    const why = isDomainError(err) ? err.message : `the CA refused: ${caSays(err)}`;
    if (!isDomainError(err)) ctx.log.debug({ err, certificate_id: id }, 'ACME issuance error');
    await recordFailure(ctx, row, claimedAt, why);
    return 'failed';
  }
  return recordSuccess(ctx, row, claimedAt, material);
}

async function order(ctx: DomainContext, row: CertificateRow, opts: IssueOptions): Promise<{ chainPem: string; keyPem: string }> {
  if (!row.acme_account_id || !row.dns_provider_id) throw new UnavailableError('the certificate names no ACME account or DNS provider');
  const total = opts.deadlineMs ?? issuanceDeadlineMs(ctx.config.acme.propagation_timeout_seconds);
  const deadline = Date.now() + total;
  const left = () => Math.max(1, deadline - Date.now());
  // The registration's own deadline, or what is left of the attempt's when that comes first.
  const registration = opts.registrationDeadlineMs ?? ACME_REGISTRATION_DEADLINE_MS;
  await registerAcmeAccount(
    ctx,
    row.acme_account_id,
    registration < left()
      ? { deadlineMs: registration, requestTimeoutMs: opts.requestTimeoutMs }
      : { deadlineMs: left(), statedDeadlineMs: total, requestTimeoutMs: opts.requestTimeoutMs },
  );
  const account = await ctx.db.selectFrom('acme_accounts').selectAll().where('id', '=', row.acme_account_id).executeTakeFirst();
  const provider = await ctx.db.selectFrom('dns_providers').selectAll().where('id', '=', row.dns_provider_id).executeTakeFirst();
  if (!account?.account_key_enc || !account.account_url) throw new UnavailableError('the ACME account is not registered');
  if (!provider) throw new UnavailableError('the DNS provider no longer exists');
  // TSIG and API signatures carry the wall-clock time the server checks, not the business clock.
  const dns = storedDnsProviderPort(ctx, provider, () => new Date());
  const waitMs = ctx.config.acme.propagation_timeout_seconds * 1000;
  return ctx.vendors.acme.session(
    {
      outbound: ctx.outbound,
      directoryUrl: account.directory_url,
      accountKeyPem: ctx.secrets.open(account.account_key_enc),
      accountUrl: account.account_url,
      extraCaFile: ctx.config.acme.extra_ca_file,
      deadlineMs: left(),
      statedDeadlineMs: total,
      requestTimeoutMs: opts.requestTimeoutMs,
    },
    (client, signal) =>
      client.orderCertificate(row.domains as string[], {
        publish: async (fqdn, value) => {
          await dns.addTxt(fqdn, value);
          await visible(dns, fqdn, value, waitMs, opts.pollMs ?? 2000, signal);
        },
        unpublish: async (fqdn, value) => {
          await dns.removeTxt(fqdn, value).catch((err: unknown) => {
            ctx.log.warn({ err, certificate_id: row.id, record: fqdn }, 'DNS-01 value not removed; remove it by hand');
          });
        },
      }),
  );
}

/** Waits until the zone's authoritative servers show `value` at `fqdn` (where the CA will look), or the attempt is given up. */
async function visible(
  dns: DnsProviderPort,
  fqdn: string,
  value: string,
  waitMs: number,
  pollMs: number,
  signal: AbortSignal,
): Promise<void> {
  const deadline = Date.now() + waitMs;
  while (!(await dns.isVisible(fqdn, value))) {
    if (signal.aborted) throw new TimeoutError('the attempt was given up at its deadline');
    if (Date.now() > deadline)
      throw new TimeoutError(
        `the TXT value at ${fqdn} did not show at the authoritative DNS servers within ${Math.round(waitMs / 1000)} s`,
      );
    await sleep(pollMs);
  }
}

async function recordSuccess(
  ctx: DomainContext,
  row: CertificateRow,
  claimedAt: Date,
  material: { chainPem: string; keyPem: string },
): Promise<IssueOutcome> {
  let parsed: ReturnType<typeof parseCertificateMaterial>;
  try {
    parsed = parseCertificateMaterial(material.chainPem, material.keyPem, row.domains as string[], { now: ctx.clock.now() });
  } catch (err) {
    await recordFailure(ctx, row, claimedAt, `the CA's certificate is not usable: ${isDomainError(err) ? err.message : caSays(err)}`);
    return 'failed';
  }
  const renewal = row.cert_pem !== null;
  return unitOfWork(ctx, async (uow) => {
    const now = ctx.clock.now();
    const current = await uow.db
      .selectFrom('certificates')
      .select(['renew_requested_at'])
      .where('id', '=', row.id)
      .forUpdate()
      .executeTakeFirst();
    if (!current) return 'failed' as const; // deleted meanwhile
    // A renewal asked for while this attempt ran is still owed.
    const askedSince = current.renew_requested_at !== null && current.renew_requested_at > claimedAt;
    await uow.db
      .updateTable('certificates')
      .set({
        cert_pem: parsed.certPem,
        key_pem_enc: ctx.secrets.seal(parsed.keyPem),
        issuer: parsed.issuer,
        not_before: parsed.notBefore,
        not_after: parsed.notAfter,
        status: 'issued',
        last_error: null,
        failed_attempts: 0,
        issuing_since: null,
        renew_requested_at: askedSince ? current.renew_requested_at : null,
        next_attempt_at: askedSince ? now : nextRenewalAt(parsed.notBefore, parsed.notAfter, now),
        updated_at: now,
      })
      .where('id', '=', row.id)
      .execute();
    const nodes = await bumpNodeRevisions(uow, await nodesOfCertificate(uow.db, row.id));
    await rollOutCertificate(uow, row.id, nodes, parsed.notAfter, now);
    uow.audit({
      action: renewal ? 'certificate.renewed' : 'certificate.issued',
      entity_type: 'certificate',
      entity_id: row.id,
      details: {
        domains: parsed.domains,
        issuer: parsed.issuer,
        not_after: parsed.notAfter.toISOString(),
        ...(nodes.length > 0 ? { nodes_bumped: nodes } : {}),
      },
    });
    await recordEvent(
      uow,
      {
        type: 'certificate.issued',
        payload: { certificate_id: row.id, name: row.name, domains: parsed.domains, not_after: parsed.notAfter.toISOString(), renewal },
      },
      now,
    );
    return renewal ? ('renewed' as const) : ('issued' as const);
  });
}

async function recordFailure(ctx: DomainContext, row: CertificateRow, claimedAt: Date, why: string): Promise<void> {
  const error = why.slice(0, 1000);
  await unitOfWork(ctx, async (uow) => {
    const now = ctx.clock.now();
    const current = await uow.db
      .selectFrom('certificates')
      .select(['renew_requested_at', 'failed_attempts', 'cert_pem', 'not_after'])
      .where('id', '=', row.id)
      .forUpdate()
      .executeTakeFirst();
    if (!current) return;
    const failures = current.failed_attempts + 1;
    const askedSince = current.renew_requested_at !== null && current.renew_requested_at > claimedAt;
    await uow.db
      .updateTable('certificates')
      .set({
        // What was serving keeps serving: only a certificate that never had material fails.
        ...(current.cert_pem === null ? { status: 'failed' } : {}),
        last_error: error,
        failed_attempts: failures,
        issuing_since: null,
        renew_requested_at: askedSince ? current.renew_requested_at : null,
        next_attempt_at: askedSince ? now : new Date(now.getTime() + retryAfterMs(failures)),
        updated_at: now,
      })
      .where('id', '=', row.id)
      .execute();
    uow.audit({
      action: 'certificate.issue_failed',
      entity_type: 'certificate',
      entity_id: row.id,
      details: { domains: row.domains, error, failed_attempts: failures, renewal: current.cert_pem !== null },
    });
    await recordEvent(
      uow,
      {
        type: 'certificate.issue_failed',
        payload: {
          certificate_id: row.id,
          name: row.name,
          domains: row.domains as string[],
          error,
          failed_attempts: failures,
          serving_until: current.not_after?.toISOString() ?? null,
        },
      },
      now,
    );
  });
  ctx.log.warn({ certificate_id: row.id, error }, 'ACME certificate not issued; tried again later');
}
