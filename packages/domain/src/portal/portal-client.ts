import type { ClientRow } from '@svc/db';
import { clientMaySignIn } from '../clients/client-status.ts';
import { UnauthenticatedError } from '../errors.ts';
import type { DomainDeps } from '../shared/context.ts';

/**
 * The client a portal access token names, as they are now: access tokens are not revocable
 * (spec 5.3), so every portal route checks that the client still exists and may sign in
 * (a client banned a minute ago reads nothing more).
 */
export async function portalClient(deps: Pick<DomainDeps, 'db'>, clientId: string): Promise<ClientRow> {
  const row = await deps.db.selectFrom('clients').selectAll().where('id', '=', clientId).executeTakeFirst();
  if (!row || !clientMaySignIn(row)) throw new UnauthenticatedError('this account can no longer sign in');
  return row;
}
