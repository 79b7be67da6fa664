import { recordEvent } from '../events/record-event.ts';
import type { DomainContext } from '../shared/context.ts';
import { unitOfWork } from '../shared/unit-of-work.ts';

/** How long before its expiry an uploaded certificate is announced (issue 16 item 4). */
export const EXPIRY_NOTICE_DAYS = 14;
const DAY_MS = 86_400_000;

/**
 * The worker's `certificates.sweep`: each uploaded certificate whose not_after falls within
 * EXPIRY_NOTICE_DAYS (or has passed) and that was not announced for this not_after yet gets a
 * `certificate.expiring` event (owners' mail, webhooks). New material has another not_after and
 * is announced again when its time comes; the same material never twice (the claim and the
 * event are one transaction; SKIP LOCKED lets two workers share the work).
 */
export async function announceExpiringCertificates(ctx: DomainContext, limit = 100): Promise<number> {
  return unitOfWork(ctx, async (uow) => {
    const now = ctx.clock.now();
    const rows = await uow.db
      .selectFrom('certificates')
      .select(['id', 'name', 'domains', 'not_after'])
      .where('kind', '=', 'uploaded')
      .where('not_after', 'is not', null)
      .where('not_after', '<=', new Date(now.getTime() + EXPIRY_NOTICE_DAYS * DAY_MS))
      .where((eb) => eb.or([eb('expiry_announced_for', 'is', null), eb('expiry_announced_for', '!=', eb.ref('not_after'))]))
      .orderBy('not_after')
      .limit(limit)
      .forUpdate()
      .skipLocked()
      .execute();
    for (const r of rows) {
      const notAfter = r.not_after as Date;
      await uow.db.updateTable('certificates').set({ expiry_announced_for: notAfter }).where('id', '=', r.id).execute();
      await recordEvent(
        uow,
        {
          type: 'certificate.expiring',
          payload: {
            certificate_id: r.id,
            name: r.name,
            domains: r.domains as string[],
            not_after: notAfter.toISOString(),
            days_left: Math.max(0, Math.floor((notAfter.getTime() - now.getTime()) / DAY_MS)),
          },
        },
        now,
      );
    }
    return rows.length;
  });
}
