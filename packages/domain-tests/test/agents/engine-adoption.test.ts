import { randomBytes } from 'node:crypto';
import { compileDesiredState } from '@svc/desired-state';
import {
  adoptEngines,
  enrollNode,
  ensureCertificateAuthority,
  getNode,
  issueEnrollToken,
  type LoadedCa,
  openAgentStreams,
  parseInput,
  TOPICS,
  UpdateNodeInput,
  updateNode,
  verifyNodeCertificate,
} from '@svc/domain';
import { createDomainTestbed, type DomainTestbed, fixtures } from '@svc/testkit';
import { makeCsr } from '@svc/testkit/agent-simulator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * Issue 28.2 (docs/agent-gateway.md, "Engines"): a node's desired state is compiled for the
 * engine its agent reports. A reported engine that compiles differently is adopted with a new
 * revision before the stream is admitted; one that compiles alike changes nothing; a revision
 * always compiles alike, whatever the agent reported since.
 */

let bed: DomainTestbed;
let ca: LoadedCa;
beforeAll(async () => {
  bed = await createDomainTestbed();
  ca = await ensureCertificateAuthority(bed.deps);
});
afterAll(() => bed.close());

/** An enrolled node with an inbound of a default profile (sniffing http, tls, quic) granted to an active subscription. */
async function enrolledNode() {
  const f = fixtures(bed.ctx());
  const node = await f.node();
  const { token } = await issueEnrollToken(bed.ctx(), node.id);
  const enrolled = await enrollNode(
    bed.deps,
    ca,
    { token, csr_pem: (await makeCsr()).csrPem, hostname: 'h', agent_version: '0.2.0' },
    { ip: '192.0.2.1' },
  );
  const identity = verifyNodeCertificate(ca, enrolled.client_cert_pem, bed.clock.now());
  if (!identity) throw new Error('the certificate does not verify');
  const inbound = await f.inbound({ node_id: node.id, profile_id: (await f.profile({ protocol: 'vmess' })).id });
  const group = await f.accessGroup({ inbound_ids: [inbound.id] });
  await f.subscription({ access_group_ids: [group.id] });
  return { node, identity };
}

const report = (identity: { node_id: string; serial: string }, xray_version: string) => ({
  node_id: identity.node_id,
  serial: identity.serial,
  xray_version,
});

async function compiled(nodeId: string) {
  const state = await compileDesiredState(bed.deps, nodeId);
  if (!state) throw new Error('no such node');
  return { revision: state.revision, sniffing: state.config.xray?.inbounds[0]?.sniffing?.destOverride };
}

describe('a node’s desired state is compiled for the engine its agent reports', () => {
  it('a node that has not reported yet is compiled for current Xray; V2Ray 4 adopted: a new revision without quic; the same again: nothing', async () => {
    const { node, identity } = await enrolledNode();
    const before = await compiled(node.id);
    expect(before.sniffing).toEqual(['http', 'tls', 'quic']);

    const adopted = await adoptEngines(bed.deps, [report(identity, '4.34.0')]);
    expect(adopted.get(node.id)).toBe(before.revision + 1);
    expect(await compiled(node.id)).toEqual({ revision: before.revision + 1, sniffing: ['http', 'tls'] });
    expect(bed.published(TOPICS.nodesChanged)).toContainEqual({ ids: [node.id] });
    expect((await getNode(bed.ctx(), node.id)).engine).toEqual({
      family: 'v2ray',
      version: '4.34.0',
      sniffing: ['http', 'tls'],
      route_only: false,
      empty_shadowsocks: false,
    });

    expect((await adoptEngines(bed.deps, [report(identity, '4.34.0')])).size).toBe(0);
    expect((await compiled(node.id)).revision).toBe(before.revision + 1);
  });

  it('an engine upgraded past a capability is adopted; another version that compiles alike changes nothing', async () => {
    const { node, identity } = await enrolledNode();
    await adoptEngines(bed.deps, [report(identity, '1.5.5')]);
    const old = await compiled(node.id);
    expect(old.sniffing).toEqual(['http', 'tls']);
    expect((await adoptEngines(bed.deps, [report(identity, '25.10.15')])).get(node.id)).toBe(old.revision + 1);
    expect((await compiled(node.id)).sniffing).toEqual(['http', 'tls', 'quic']);
    expect((await adoptEngines(bed.deps, [report(identity, '26.7.28'), report(identity, 'Xray 24.9.30')])).size).toBe(0);
    expect((await getNode(bed.ctx(), node.id)).engine.version).toBe('25.10.15');
  });

  it('an engine nobody can place (an empty version) gets what every engine accepts', async () => {
    const { node, identity } = await enrolledNode();
    await adoptEngines(bed.deps, [report(identity, '')]);
    expect((await compiled(node.id)).sniffing).toEqual(['http', 'tls']);
    expect((await getNode(bed.ctx(), node.id)).engine.family).toBe('unknown');
  });

  it('a revision compiles alike whatever the agent reports meanwhile: the stream admission stores the version, only adoption changes the engine', async () => {
    const { node, identity } = await enrolledNode();
    const before = await compiled(node.id);
    const [opened] = await openAgentStreams(bed.deps, [
      {
        identity,
        ticket: { node_id: node.id, replica: 'r1', session: randomBytes(6).toString('hex'), serial: identity.serial },
        hello: { hostname: 'h', os: 'linux', arch: 'x64', agent_version: '0.2.0', xray_version: '4.34.0', applied_revision: 0 },
      },
    ]);
    expect(opened).toMatchObject({ desired_revision: before.revision });
    expect((await getNode(bed.ctx(), node.id)).xray_version).toBe('4.34.0');
    expect(await compiled(node.id)).toEqual(before);
  });

  it('only the node’s own enabled identity adopts an engine: another certificate or a disabled node changes nothing', async () => {
    const { node, identity } = await enrolledNode();
    const before = await compiled(node.id);
    expect((await adoptEngines(bed.deps, [{ ...report(identity, '4.34.0'), serial: 'ffff' }])).size).toBe(0);
    await updateNode(bed.ctx(), node.id, parseInput(UpdateNodeInput, { admin_status: 'disabled' }));
    const disabled = await compiled(node.id);
    expect((await adoptEngines(bed.deps, [report(identity, '4.34.0')])).size).toBe(0);
    expect(await compiled(node.id)).toEqual(disabled);
    expect(disabled.sniffing).toEqual(before.sniffing);
  });
});
