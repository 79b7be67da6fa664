import { randomBytes } from 'node:crypto';
import { advisoryXactLock } from '../shared/locks.ts';
import type { Sealer } from '../shared/sealed.ts';
import { type UnitOfWorkDeps, unitOfWork } from '../shared/unit-of-work.ts';
import { createCa, type LoadedCa, loadCa } from './internal-ca.ts';

/**
 * The installation's CA, created once (under a lock, so replicas starting together agree on
 * one) and kept with its key sealed by the installation key.
 */
export async function ensureCertificateAuthority(deps: UnitOfWorkDeps & { secrets: Sealer }): Promise<LoadedCa> {
  const row = await unitOfWork(deps, async (uow) => {
    const trx = uow.db;
    const found = await trx.selectFrom('certificate_authority').selectAll().where('id', '=', 1).executeTakeFirst();
    if (found) return found;
    await advisoryXactLock(trx, 'svc.certificate_authority');
    const again = await trx.selectFrom('certificate_authority').selectAll().where('id', '=', 1).executeTakeFirst();
    if (again) return again;
    const now = deps.clock.now();
    const ca = await createCa(randomBytes(6).toString('hex'), now);
    const notAfter = new Date(now.getTime() + 10 * 365 * 86_400_000);
    return trx
      .insertInto('certificate_authority')
      .values({ id: 1, cert_pem: ca.certPem, key_enc: deps.secrets.seal(ca.keyPem), not_after: notAfter, created_at: now })
      .returningAll()
      .executeTakeFirstOrThrow();
  });
  return loadCa({ certPem: row.cert_pem, keyPem: deps.secrets.open(row.key_enc) });
}
