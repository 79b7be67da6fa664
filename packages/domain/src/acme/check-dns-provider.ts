import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import { isDomainError, NotFoundError, TimeoutError } from '../errors.ts';
import type { DomainContext } from '../shared/context.ts';
import { unitOfWork } from '../shared/unit-of-work.ts';
import type { DnsProviderPort } from './dns/dns-provider-port.ts';
import { storedDnsProviderPort } from './stored-dns-provider.ts';

/** POST /dns-providers/{id}/check: the domain whose zone the provider should be able to change. */
export const CheckDnsProviderInput = z
  .object({
    domain: z
      .string()
      .min(1)
      .max(200)
      .regex(/^([A-Za-z0-9-]{1,63}\.)+[A-Za-z0-9-]{1,63}\.?$/, 'must be a domain name (example.com)')
      .meta({ description: 'a name in a zone the provider manages; the test record is _svc-check.<domain>' }),
  })
  .strict()
  .brand<'CheckDnsProviderInput'>();
export type CheckDnsProviderInput = z.output<typeof CheckDnsProviderInput>;

export interface DnsCheckStep {
  step: 'add' | 'visible' | 'remove' | 'gone';
  ok: boolean;
  /** What happened, in words (the provider's refusal, how long it took). */
  detail: string;
  ms: number;
}

export interface DnsCheckReport {
  ok: boolean;
  record: string;
  steps: DnsCheckStep[];
}

/** How long the check waits for the value to show (or go) at the authoritative servers. */
export const DNS_CHECK_WAIT_MS = 30_000;

/**
 * Creates a TXT record with a random value at `_svc-check.<domain>`, waits until the zone's
 * authoritative servers show it, removes it and waits until it is gone; the report says what
 * happened at each step (a failing step ends the check, and the record is still removed). A
 * provider that cannot do it is a report with ok false, not an error: what failed is the
 * answer. Audited.
 */
export async function checkDnsProvider(
  ctx: DomainContext,
  id: string,
  input: CheckDnsProviderInput,
  opts: { waitMs?: number; pollMs?: number } = {},
): Promise<DnsCheckReport> {
  const row = await ctx.db.selectFrom('dns_providers').selectAll().where('id', '=', id).executeTakeFirst();
  if (!row) throw new NotFoundError('DNS provider', id);
  const record = `_svc-check.${input.domain.replace(/\.$/, '').toLowerCase()}`;
  const value = `svc-check-${randomBytes(12).toString('hex')}`;
  const steps: DnsCheckStep[] = [];
  const waitMs = opts.waitMs ?? DNS_CHECK_WAIT_MS;
  const pollMs = opts.pollMs ?? 500;
  const timed = async (step: DnsCheckStep['step'], fn: () => Promise<string>): Promise<boolean> => {
    const start = Date.now();
    try {
      const detail = await fn();
      steps.push({ step, ok: true, detail, ms: Date.now() - start });
      return true;
    } catch (err) {
      const detail = isDomainError(err) ? err.message : 'the provider could not be asked (unexpected error)';
      if (!isDomainError(err)) ctx.log.warn({ err, dns_provider_id: id }, 'DNS provider check failed unexpectedly');
      steps.push({ step, ok: false, detail, ms: Date.now() - start });
      return false;
    }
  };
  const waitFor = async (port: DnsProviderPort, shown: boolean): Promise<string> => {
    const deadline = Date.now() + waitMs;
    for (;;) {
      if ((await port.isVisible(record, value)) === shown)
        return shown ? 'visible at the authoritative server' : 'gone from the authoritative server';
      if (Date.now() > deadline)
        throw new TimeoutError(`the value ${shown ? 'did not show' : 'did not go'} within ${Math.round(waitMs / 1000)} s`);
      await sleep(pollMs);
    }
  };
  let port: DnsProviderPort | undefined;
  const added = await timed('add', async () => {
    // TSIG and API signatures carry the wall-clock time the server checks.
    port = storedDnsProviderPort(ctx, row, () => new Date());
    await port.addTxt(record, value);
    return `TXT ${record} added`;
  });
  if (added && port) {
    const p = port;
    await timed('visible', () => waitFor(p, true));
    const removed = await timed('remove', async () => {
      await p.removeTxt(record, value);
      return `TXT ${record} removed`;
    });
    if (removed) await timed('gone', () => waitFor(p, false));
  }
  const report: DnsCheckReport = { ok: steps.length === 4 && steps.every((s) => s.ok), record, steps };
  await unitOfWork(ctx, async (uow) => {
    uow.audit({
      action: 'dns_provider.checked',
      entity_type: 'dns_provider',
      entity_id: id,
      details: { ok: report.ok, record, failed: steps.find((s) => !s.ok)?.step ?? null },
    });
  });
  return report;
}
