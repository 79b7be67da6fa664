import { getInbound, parseInput, UpdateInboundProfileInput, updateInboundProfile } from '@svc/domain';
import { uniqueName } from '@svc/testkit';
import { describe, expect, it } from 'vitest';
import { auditOf, fileTestbed, plusOne, refusal, revisionsOf } from '../support.ts';

const t = fileTestbed();

const update = (id: string, input: Record<string, unknown>) =>
  updateInboundProfile(t.bed.ctx(), id, parseInput(UpdateInboundProfileInput, input));
const WS = { network: 'ws', security: 'none' } as const;

describe('updateInboundProfile', () => {
  it('an edit moves the revision of every node with an inbound of the profile, once each, and of no other node', async () => {
    const [p, q] = [await t.f.profile({ protocol: 'vmess', stream: WS }), await t.f.profile({ protocol: 'vmess', stream: WS })];
    const [n1, n2, n3, n4] = [(await t.f.node()).id, (await t.f.node()).id, (await t.f.node()).id, (await t.f.node()).id];
    await t.f.inbound({ node_id: n1, profile_id: p.id, port: 8001 });
    await t.f.inbound({ node_id: n1, profile_id: p.id, port: 8002 });
    await t.f.inbound({ node_id: n2, profile_id: p.id, port: 8001 });
    await t.f.inbound({ node_id: n3, profile_id: q.id, port: 8001 });
    const ids = [n1, n2, n3, n4];
    const before = await revisionsOf(t.bed, ids);
    await update(p.id, { stream: { ...WS, ws: { path: '/new' } } });
    expect(await revisionsOf(t.bed, ids)).toEqual(plusOne(before, [n1, n2]));
    // A rename is not something nodes run.
    await update(p.id, { name: uniqueName('renamed') });
    expect(await revisionsOf(t.bed, ids)).toEqual(plusOne(before, [n1, n2]));
    // Sniffing and block_bittorrent: nodes run them.
    await update(p.id, { block_bittorrent: true });
    expect(await revisionsOf(t.bed, ids)).toEqual(plusOne(plusOne(before, [n1, n2]), [n1, n2]));
    const audit = (await auditOf(t.bed, p.id)).find((a) => a.action === 'inbound_profile.updated');
    expect((audit?.details as { nodes_bumped?: string[] }).nodes_bumped).toEqual([n1, n2].sort());
  });

  it('re-sending what the profile already has bumps nothing; a real change bumps its nodes', async () => {
    const sniffing = { enabled: false, dest_override: [], route_only: false };
    const p = await t.f.profile({ stream: { network: 'tcp', security: 'none' }, sniffing });
    const { node_id } = await t.f.inbound({ profile_id: p.id });
    const r0 = await revisionsOf(t.bed, [node_id]);
    await update(p.id, { sniffing });
    expect(await revisionsOf(t.bed, [node_id])).toEqual(r0);
    await update(p.id, { sniffing: { enabled: true, dest_override: ['http', 'tls'], route_only: false } });
    expect(await revisionsOf(t.bed, [node_id])).toEqual(plusOne(r0, [node_id]));
  });

  it('merges: `stream` replaces the stream as a whole, sniffing merges field by field, other fields stay', async () => {
    const p = await t.f.profile({
      protocol: 'vmess',
      stream: { ...WS, ws: { path: '/a', headers: { 'X-A': '1' } } },
      sniffing: { enabled: true, dest_override: ['http'], route_only: false },
    });
    t.bed.clock.advance(1000);
    const res = await update(p.id, {
      stream: { network: 'grpc', security: 'none', grpc: { service_name: 'svc' } },
      sniffing: { route_only: true },
    });
    expect(res.stream).toEqual({ network: 'grpc', security: 'none', grpc: { service_name: 'svc', multi_mode: false } });
    expect(res.sniffing).toEqual({ enabled: true, dest_override: ['http'], route_only: true });
    expect(res).toMatchObject({ name: p.name, protocol: 'vmess' });
    expect(res.updated_at).toBe(t.bed.clock.now().toISOString());
  });

  it('the merged result is checked like a creation; an unknown profile is not found', async () => {
    const p = await t.f.profile({ protocol: 'vmess', stream: WS });
    expect((await refusal(update(p.id, { vless_flow: 'xtls-rprx-vision' }))).errors).toHaveProperty('vless_flow');
    expect(await refusal(update('ipr_nope', { name: 'x' }))).toMatchObject({ type: 'not-found' });
  });

  it('a protocol change renames the tags of its inbounds (`<protocol>-<port>`); vless_flow null clears it', async () => {
    const p = await t.f.profile({
      protocol: 'vless',
      vless_flow: 'xtls-rprx-vision',
      stream: { network: 'tcp', security: 'reality', reality: { dest: 'www.example.com:443', server_names: ['www.example.com'] } },
    });
    const inbound = await t.f.inbound({ profile_id: p.id, port: 443 });
    expect(inbound.tag).toBe('vless-443');
    const res = await update(p.id, { protocol: 'trojan', vless_flow: null });
    expect(res.vless_flow).toBeNull();
    expect((await getInbound(t.bed.ctx(), inbound.id)).tag).toBe('trojan-443');
  });
});
