import {
  CreateSubscriptionInput,
  createSubscription,
  deleteSubscription,
  parseInput,
  rotateSubscriptionCredentials,
  UpdateSubscriptionInput,
  updateSubscription,
} from '@svc/domain';
import { createDomainTestbed, type DomainTestbed, fixtures } from '@svc/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accessGroup, servedNode } from '../customers-support.ts';
import { bumpsOf } from '../support.ts';

let bed: DomainTestbed;
beforeAll(async () => {
  bed = await createDomainTestbed();
});
afterAll(() => bed.close());

describe('revisions: a subscription change moves exactly the nodes of its inbounds', () => {
  it('create, status change, group change (before and after), rotate and delete bump; note, renewal and a limit that changes no status do not', async () => {
    const ctx = bed.ctx();
    const n1 = await servedNode(ctx);
    const n2 = await servedNode(ctx, 2);
    const n3 = await servedNode(ctx);
    const nodes = [n1.node, n2.node, n3.node];
    const none = { [n1.node]: 0, [n2.node]: 0, [n3.node]: 0 };
    const both = { [n1.node]: 1, [n2.node]: 1, [n3.node]: 0 };
    // A group spanning two nodes; n3 is never granted.
    const spanning = await accessGroup(ctx, [...n1.inbounds, ...n2.inbounds]);
    const client = (await fixtures(ctx).client()).id;
    const update = (input: Record<string, unknown>) => updateSubscription(ctx, sub, parseInput(UpdateSubscriptionInput, input));

    let sub = '';
    expect(
      await bumpsOf(ctx, nodes, async () => {
        sub = (await createSubscription(ctx, parseInput(CreateSubscriptionInput, { client_id: client, access_group_ids: n1.groups }))).id;
      }),
    ).toEqual({ [n1.node]: 1, [n2.node]: 0, [n3.node]: 0 });

    for (const quiet of [{ note: 'n' }, { renewal: 'day' }, { access_group_ids: n1.groups }, { status: 'active' }]) {
      expect(await bumpsOf(ctx, nodes, () => update(quiet)), JSON.stringify(quiet)).toEqual(none);
    }
    // Issue 36: a first traffic limit gives its nodes a slice of it (a new revision); another value changes no status and no slice.
    expect(await bumpsOf(ctx, nodes, () => update({ traffic_limit_bytes: 1_000_000 }))).toEqual({
      [n1.node]: 1,
      [n2.node]: 0,
      [n3.node]: 0,
    });
    expect(await bumpsOf(ctx, nodes, () => update({ traffic_limit_bytes: 2_000_000 }))).toEqual(none);

    // Groups replaced: the nodes it leaves and the nodes it joins.
    expect(await bumpsOf(ctx, nodes, () => update({ access_group_ids: [n2.groups[1]] }))).toEqual(both);
    expect(await bumpsOf(ctx, nodes, () => update({ access_group_ids: [spanning, n2.groups[1]] }))).toEqual(both);

    // Status changes: limit reached, admin disable/enable.
    expect(await bumpsOf(ctx, nodes, () => update({ traffic_limit_bytes: 0 }))).toEqual(both);
    expect(await bumpsOf(ctx, nodes, () => update({ traffic_limit_bytes: null, status: 'disabled' }))).toEqual(both);
    expect(await bumpsOf(ctx, nodes, () => update({ status: 'active' }))).toEqual(both);

    expect(await bumpsOf(ctx, nodes, () => rotateSubscriptionCredentials(ctx, sub))).toEqual(both);
    expect(await bumpsOf(ctx, nodes, () => deleteSubscription(ctx, sub))).toEqual(both);
  });
});
