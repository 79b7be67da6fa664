import { approveClient, parseInput, rejectClient, UpdateClientInput, updateClient } from '@svc/domain';
import { createDomainTestbed, type DomainTestbed, fixtures } from '@svc/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientSession, servedNode, sessionOf } from '../customers-support.ts';
import { bumpsOf } from '../support.ts';

let bed: DomainTestbed;
beforeAll(async () => {
  bed = await createDomainTestbed();
});
afterAll(() => bed.close());

const setStatus = (id: string, status: 'active' | 'disabled') => updateClient(bed.ctx(), id, parseInput(UpdateClientInput, { status }));
const statusOf = async (id: string) =>
  (await bed.deps.db.selectFrom('clients').select('status').where('id', '=', id).executeTakeFirstOrThrow()).status;

describe('ban and unban (status by PATCH): active <-> disabled only', () => {
  it('a ban disables the client and ends its sessions; the same status again is no change; unban makes it active', async () => {
    const c = await fixtures(bed.ctx()).client();
    const sid = await clientSession(bed.ctx(), c.id);
    expect((await setStatus(c.id, 'disabled')).status).toBe('disabled');
    expect((await sessionOf(bed.ctx(), sid)).revoked_at).not.toBeNull();
    expect((await setStatus(c.id, 'disabled')).status).toBe('disabled');
    expect((await setStatus(c.id, 'active')).status).toBe('active');
  });

  it('any other status move is a conflict naming the status: pending and rejected clients are not banned or activated', async () => {
    const pending = await fixtures(bed.ctx()).client({ status: 'pending' });
    const rejected = await fixtures(bed.ctx()).client({ status: 'rejected' });
    for (const [id, status] of [
      [pending.id, 'active'],
      [pending.id, 'disabled'],
      [rejected.id, 'active'],
      [rejected.id, 'disabled'],
    ] as const) {
      await expect(setStatus(id, status), `${id} -> ${status}`).rejects.toMatchObject({
        type: 'conflict',
        errors: { status: expect.any(String) },
      });
    }
    expect(await statusOf(pending.id)).toBe('pending');
    expect(await statusOf(rejected.id)).toBe('rejected');
  });

  it('the input takes only active or disabled', () => {
    for (const status of ['pending', 'rejected', 'banned'])
      expect(() => parseInput(UpdateClientInput, { status })).toThrow(expect.objectContaining({ errors: { status: expect.any(String) } }));
  });
});

describe('approve and reject (spec 3.1): from pending; approve also from rejected (rule 3)', () => {
  it('approve moves pending -> active and keeps email_verified_at as it was', async () => {
    const unverified = await fixtures(bed.ctx()).client({ status: 'pending' });
    expect(await approveClient(bed.ctx(), unverified.id)).toMatchObject({ status: 'active', email_verified_at: null });
    const verified = await fixtures(bed.ctx()).client({ status: 'pending', email_verified: true });
    expect((await approveClient(bed.ctx(), verified.id)).email_verified_at).toBe(verified.email_verified_at);
  });

  it('reject moves pending -> rejected', async () => {
    const c = await fixtures(bed.ctx()).client({ status: 'pending' });
    expect((await rejectClient(bed.ctx(), c.id)).status).toBe('rejected');
  });

  it('rule 3: a rejected client can be approved after all (rejected -> active), not rejected again', async () => {
    const c = await fixtures(bed.ctx()).client({ status: 'rejected' });
    await expect(rejectClient(bed.ctx(), c.id)).rejects.toMatchObject({ type: 'conflict' });
    expect((await approveClient(bed.ctx(), c.id)).status).toBe('active');
  });

  it('approving an active or disabled client, or rejecting one that is not pending, is a conflict and changes nothing', async () => {
    for (const status of ['active', 'rejected', 'disabled'] as const) {
      const c = await fixtures(bed.ctx()).client({ status });
      for (const decide of status === 'rejected' ? [rejectClient] : [approveClient, rejectClient]) {
        await expect(decide(bed.ctx(), c.id), status).rejects.toMatchObject({ type: 'conflict' });
      }
      expect(await statusOf(c.id)).toBe(status);
    }
    await expect(approveClient(bed.ctx(), 'cli_doesnotexist')).rejects.toMatchObject({ type: 'not-found' });
    await expect(rejectClient(bed.ctx(), 'cli_doesnotexist')).rejects.toMatchObject({ type: 'not-found' });
  });
});

describe('revisions: a client status change moves exactly the nodes of its subscriptions', () => {
  it('ban and unban bump the nodes of every subscription of the client; a note or email change bumps none', async () => {
    const [a, b, other] = [await servedNode(bed.ctx()), await servedNode(bed.ctx()), await servedNode(bed.ctx())];
    const nodes = [a.node, b.node, other.node];
    const c = await fixtures(bed.ctx()).client();
    await fixtures(bed.ctx()).subscription({ client_id: c.id, access_group_ids: a.groups });
    await fixtures(bed.ctx()).subscription({ client_id: c.id, access_group_ids: b.groups });

    const quiet = await bumpsOf(bed.ctx(), nodes, () =>
      updateClient(bed.ctx(), c.id, parseInput(UpdateClientInput, { note: 'quiet', email: 'quiet-change@example.com' })),
    );
    expect(quiet).toEqual({ [a.node]: 0, [b.node]: 0, [other.node]: 0 });
    expect(await bumpsOf(bed.ctx(), nodes, () => setStatus(c.id, 'disabled'))).toEqual({ [a.node]: 1, [b.node]: 1, [other.node]: 0 });
    expect(await bumpsOf(bed.ctx(), nodes, () => setStatus(c.id, 'active'))).toEqual({ [a.node]: 1, [b.node]: 1, [other.node]: 0 });
  });

  it('approving a pending client that already has a subscription bumps its nodes', async () => {
    const a = await servedNode(bed.ctx());
    const pending = await fixtures(bed.ctx()).client({ status: 'pending' });
    await fixtures(bed.ctx()).subscription({ client_id: pending.id, access_group_ids: a.groups });
    expect(await bumpsOf(bed.ctx(), [a.node], () => approveClient(bed.ctx(), pending.id))).toEqual({ [a.node]: 1 });
  });
});
