import { approveClient, deleteClient, parseInput, rejectClient, UpdateClientInput, updateClient } from '@svc/domain';
import { createDomainTestbed, type DomainTestbed, fixtures, TEST_OWNER } from '@svc/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditOf } from '../support.ts';

let bed: DomainTestbed;
beforeAll(async () => {
  bed = await createDomainTestbed();
});
afterAll(() => bed.close());

const actions = async (id: string) => (await auditOf(bed.ctx(), id)).map((r) => r.action);

describe('audit: every client change writes an entry by the acting admin, in the same transaction', () => {
  it('records created, updated (what changed, the status move and its event) and deleted', async () => {
    const c = await fixtures(bed.ctx()).client();
    await updateClient(bed.ctx(), c.id, parseInput(UpdateClientInput, { status: 'disabled' }));
    await deleteClient(bed.ctx(), c.id);
    const rows = await auditOf(bed.ctx(), c.id);
    expect(rows.map((r) => r.action)).toEqual(['client.created', 'client.updated', 'client.deleted']);
    for (const r of rows) expect(r).toMatchObject({ actor_type: 'admin', actor_id: TEST_OWNER.id, entity_type: 'client' });
    expect(rows[1]?.details).toMatchObject({ changed: ['status'], status: { from: 'active', to: 'disabled' }, event: 'ban' });
  });

  it('records approved and rejected', async () => {
    const a = await fixtures(bed.ctx()).client({ status: 'pending' });
    const r = await fixtures(bed.ctx()).client({ status: 'pending' });
    await approveClient(bed.ctx(), a.id);
    await rejectClient(bed.ctx(), r.id);
    expect(await actions(a.id)).toEqual(['client.approved']);
    expect(await actions(r.id)).toEqual(['client.rejected']);
  });

  it('no password or hash enters the details', async () => {
    const c = await fixtures(bed.ctx()).client({ password: 'secret-password-9' });
    await updateClient(bed.ctx(), c.id, parseInput(UpdateClientInput, { password: 'secret-password-8' }));
    expect(JSON.stringify(await auditOf(bed.ctx(), c.id))).not.toMatch(/secret-password|argon2/);
  });

  it('a refused change (conflict) leaves no entry', async () => {
    const c = await fixtures(bed.ctx()).client();
    await expect(approveClient(bed.ctx(), c.id)).rejects.toMatchObject({ type: 'conflict' });
    expect(await actions(c.id)).toEqual(['client.created']);
  });
});
