import {
  deleteInbound,
  deleteInboundProfile,
  getInboundProfile,
  parseInput,
  UpdateInboundProfileInput,
  updateInboundProfile,
} from '@svc/domain';
import { TEST_OWNER, uniqueName } from '@svc/testkit';
import { describe, expect, it } from 'vitest';
import { auditOf, fileTestbed, refusal } from '../support.ts';

const t = fileTestbed();

describe('deleteInboundProfile', () => {
  it('is refused as a conflict naming the inbounds bound to the profile; once they are gone it deletes', async () => {
    const p = await t.f.profile();
    const node = await t.f.node();
    const a = await t.f.inbound({ node_id: node.id, profile_id: p.id, port: 9001 });
    const b = await t.f.inbound({ node_id: node.id, profile_id: p.id, port: 9002 });
    const err = await refusal(deleteInboundProfile(t.bed.ctx(), p.id));
    expect(err.type).toBe('conflict');
    expect(err.extra).toEqual({ blocked_by: { inbounds: [a.id, b.id].sort() } });
    expect(err.message).toContain('inbounds');
    for (const i of [a, b]) await deleteInbound(t.bed.ctx(), i.id);
    await deleteInboundProfile(t.bed.ctx(), p.id);
    expect(await refusal(getInboundProfile(t.bed.ctx(), p.id))).toMatchObject({ type: 'not-found' });
  });
});

describe('the audit of inbound profiles', () => {
  it('create, update and delete each write an entry by the acting admin: what it is, what changed', async () => {
    const p = await t.f.profile({
      protocol: 'vless',
      stream: { network: 'tcp', security: 'reality', reality: { dest: 'www.example.com:443', server_names: ['www.example.com'] } },
    });
    await updateInboundProfile(t.bed.ctx(), p.id, parseInput(UpdateInboundProfileInput, { name: uniqueName('audited') }));
    await deleteInboundProfile(t.bed.ctx(), p.id);
    const rows = await auditOf(t.bed, p.id);
    expect(rows.map((r) => r.action)).toEqual(['inbound_profile.created', 'inbound_profile.updated', 'inbound_profile.deleted']);
    for (const r of rows) expect(r).toMatchObject({ actor_type: 'admin', actor_id: TEST_OWNER.id, entity_type: 'inbound_profile' });
    expect(rows[0]?.details).toMatchObject({ protocol: 'vless', network: 'tcp', security: 'reality' });
    expect(rows[1]?.details).toMatchObject({ changed: ['name'] });
  });
});
