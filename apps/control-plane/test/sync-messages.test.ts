import { X509Certificate } from 'node:crypto';
import { usageFolded } from '@svc/testkit';
import { Status } from 'nice-grpc';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appliedRevisionWriter } from '../src/applied-revisions.ts';
import { eventually, type Gateway, nodeRow, startGateway } from './harness.ts';

let g: Gateway;
let profileId: string;
let clientId: string;
let port = 20000;

beforeAll(async () => {
  g = await startGateway();
  const t = await g.token();
  profileId = (
    await g.s.api.post(
      '/api/v1/inbound-profiles',
      { name: 'vmess-ws', protocol: 'vmess', stream: { network: 'ws', security: 'none' } },
      { token: t },
    )
  ).body.id;
  clientId = (await g.s.api.post('/api/v1/clients', { email: 'usage@example.com' }, { token: t })).body.id;
});
afterAll(() => g.stop());

/** A real change that moves the node's desired revision: a new inbound on it. */
async function changeNode(nodeId: string): Promise<number> {
  const res = await g.s.api.post('/api/v1/inbounds', { node_id: nodeId, profile_id: profileId, port: port++ }, { token: await g.token() });
  expect(res.status, res.text).toBe(201);
  return Number((await nodeRow(g, nodeId)).desired_revision);
}

/** An access group granting an inbound on each of these nodes: its subscriptions are served there (and only there credited). */
async function groupOn(...nodeIds: string[]): Promise<string> {
  const t = await g.token();
  const inbound_ids: string[] = [];
  for (const node_id of nodeIds) {
    const res = await g.s.api.post('/api/v1/inbounds', { node_id, profile_id: profileId, port: port++ }, { token: t });
    expect(res.status, res.text).toBe(201);
    inbound_ids.push(res.body.id);
  }
  const res = await g.s.api.post('/api/v1/access-groups', { name: `served-${port}`, inbound_ids }, { token: t });
  expect(res.status, res.text).toBe(201);
  return res.body.id;
}

async function subscription(groupId: string): Promise<string> {
  const res = await g.s.api.post('/api/v1/subscriptions', { client_id: clientId, access_group_ids: [groupId] }, { token: await g.token() });
  expect(res.status, res.text).toBe(201);
  return res.body.id;
}

const online = async (nodeId: string) => eventually(async () => expect((await nodeRow(g, nodeId)).connectivity).toBe('online'));

describe('DesiredState on open and on change (spec 3.5)', () => {
  it('a Hello with applied_revision below the desired revision gets the latest DesiredState at once', async () => {
    const { node, agent } = await g.enrolledAgent();
    const desired = Number((await nodeRow(g, node.id)).desired_revision);
    agent.connect({ appliedRevision: 0n });
    await agent.waitForRevision(BigInt(desired));
    expect(agent.desiredStates.map((d) => d.revision)).toEqual([BigInt(desired)]);
    expect(agent.desiredStates[0]?.config?.xray).toBeDefined();
  });

  it('a Hello already at the desired revision gets no DesiredState', async () => {
    const { node, agent } = await g.enrolledAgent();
    const desired = Number((await nodeRow(g, node.id)).desired_revision);
    agent.connect({ appliedRevision: BigInt(desired) });
    await online(node.id);
    agent.sendStatus();
    await eventually(async () => expect((await nodeRow(g, node.id)).last_status_at).not.toBeNull());
    expect(agent.desiredStates).toEqual([]);
  });

  it('a committed change is pushed to the open stream', async () => {
    const { node, agent } = await g.enrolledAgent();
    agent.connect();
    await agent.waitForRevision(1n);
    const next = await changeNode(node.id);
    await agent.waitForRevision(BigInt(next));
    expect(agent.desiredStates.at(-1)?.revision).toBe(BigInt(next));
  });

  it('a burst of changes ends with the newest revision delivered, each revision at most once and in order', async () => {
    const { node, agent } = await g.enrolledAgent();
    agent.connect();
    await agent.waitForRevision(1n);
    let last = 0;
    for (let i = 0; i < 8; i++) last = await changeNode(node.id);
    await agent.waitForRevision(BigInt(last));
    const revs = agent.desiredStates.map((d) => Number(d.revision));
    expect(revs.at(-1)).toBe(last);
    expect([...revs].sort((a, b) => a - b)).toEqual(revs);
    expect(new Set(revs).size).toBe(revs.length);
  });
});

describe('ApplyResult (spec 3.5, 7.1): recorded; a failure never ends the stream', () => {
  it('a failed apply is stored as last_apply_error with applied_revision unchanged; a later success clears it', async () => {
    const { node, agent } = await g.enrolledAgent();
    agent.connect();
    await agent.waitForRevision(1n);
    await eventually(async () => expect((await nodeRow(g, node.id)).applied_revision).toBe(1));
    agent.failApplyWith = 'xray: port 20001 already in use';
    const next = await changeNode(node.id);
    await agent.waitForRevision(BigInt(next));
    const t = await g.token();
    const failed = await eventually(async () => {
      const v = (await g.s.api.get(`/api/v1/nodes/${node.id}`, { token: t })).body;
      expect(v.last_apply_error).toMatch(/port 20001 already in use/);
      return v;
    });
    expect(failed.applied_revision).toBe(1);
    expect(failed.connectivity).toBe('online');
    expect(agent.ended).toBeNull();

    agent.failApplyWith = null;
    const again = await changeNode(node.id);
    await agent.waitForRevision(BigInt(again));
    await eventually(async () => {
      const v = (await g.s.api.get(`/api/v1/nodes/${node.id}`, { token: t })).body;
      expect(v.applied_revision).toBe(again);
      expect(v.last_apply_error).toBeNull();
    });
  });
});

describe('StatusReport: the node view status with last_seen_at', () => {
  it('is stored snake_case on the node view', async () => {
    const { node, agent } = await g.enrolledAgent();
    agent.connect();
    await online(node.id);
    const before = (await nodeRow(g, node.id)).last_seen_at as Date;
    g.s.clock.advance(30_000);
    agent.sendStatus({ cpuPercent: 37.25, connections: 7 });
    const t = await g.token();
    const view = await eventually(async () => {
      const v = (await g.s.api.get(`/api/v1/nodes/${node.id}`, { token: t })).body;
      expect(v.status).not.toBeNull();
      return v;
    });
    expect(view.status).toMatchObject({
      xray_running: true,
      cpu_percent: 37.25,
      memory_used_bytes: 512 * 2 ** 20,
      memory_total_bytes: 2048 * 2 ** 20,
      disk_used_bytes: 5 * 2 ** 30,
      disk_total_bytes: 20 * 2 ** 30,
      connections: 7,
      xray_uptime_seconds: 3600,
    });
    expect(new Date(view.last_seen_at).getTime()).toBe(before.getTime() + 30_000);
    expect(view.last_status_at).toBe(view.last_seen_at);
  });
});

describe('UsageReport exactly once (spec 4.1 rule 3)', () => {
  const usageOf = async (subId: string) => {
    const sub = await g.s.deps.db
      .selectFrom('subscription_counters')
      .select(['used_bytes', 'lifetime_used_bytes'])
      .where('subscription_id', '=', subId)
      .executeTakeFirstOrThrow();
    const rows = await g.s.deps.db.selectFrom('usage_hourly').selectAll().where('subscription_id', '=', subId).execute();
    return { used: Number(sub.used_bytes), lifetime: Number(sub.lifetime_used_bytes), rows };
  };

  it('a new report_id adds the deltas to used_bytes and to the hourly row of the subscription and node, and is acknowledged', async () => {
    const { node, agent } = await g.enrolledAgent();
    const group = await groupOn(node.id);
    const [a, b] = [await subscription(group), await subscription(group)];
    agent.connect();
    await online(node.id);
    await agent.sendUsage(1n, [
      { subscriptionId: a, uplinkBytes: 100n, downlinkBytes: 1000n },
      { subscriptionId: b, uplinkBytes: 5n, downlinkBytes: 6n },
      { subscriptionId: a, uplinkBytes: 1n, downlinkBytes: 2n },
    ]);
    await usageFolded(g.s.deps.db);
    const ua = await usageOf(a);
    expect(ua.used).toBe(1103);
    expect(ua.lifetime).toBe(1103);
    const hour = new Date(Math.floor(g.s.clock.now().getTime() / 3600_000) * 3600_000);
    expect(ua.rows).toEqual([expect.objectContaining({ node_id: node.id, hour, uplink_bytes: 101, downlink_bytes: 1002 })]);
    expect((await usageOf(b)).used).toBe(11);
    expect((await nodeRow(g, node.id)).last_usage_report_id).toBe(1);
  });

  it('a replayed report_id and an older one change nothing and are acknowledged with the same id', async () => {
    const { node, agent } = await g.enrolledAgent();
    const a = await subscription(await groupOn(node.id));
    agent.connect();
    await online(node.id);
    await agent.sendUsage(5n, [{ subscriptionId: a, uplinkBytes: 10n, downlinkBytes: 20n }]);
    await usageFolded(g.s.deps.db);
    await agent.sendUsage(5n, [{ subscriptionId: a, uplinkBytes: 10n, downlinkBytes: 20n }]);
    await usageFolded(g.s.deps.db);
    await agent.sendUsage(3n, [{ subscriptionId: a, uplinkBytes: 999n, downlinkBytes: 999n }]);
    await usageFolded(g.s.deps.db);
    expect(agent.acks).toEqual([5n, 5n, 3n]);
    const u = await usageOf(a);
    expect(u.used).toBe(30);
    expect(u.rows.map((r) => [r.uplink_bytes, r.downlink_bytes])).toEqual([[10, 20]]);
    expect((await nodeRow(g, node.id)).last_usage_report_id).toBe(5);
  });

  it('a report retried after a reconnect (ack lost) is counted once', async () => {
    const { node, agent } = await g.enrolledAgent();
    const a = await subscription(await groupOn(node.id));
    agent.connect();
    await online(node.id);
    await agent.sendUsage(7n, [{ subscriptionId: a, uplinkBytes: 1n, downlinkBytes: 1n }]);
    await usageFolded(g.s.deps.db);
    await agent.disconnect();
    agent.connect();
    await agent.sendUsage(7n, [{ subscriptionId: a, uplinkBytes: 1n, downlinkBytes: 1n }]);
    await usageFolded(g.s.deps.db);
    expect((await usageOf(a)).used).toBe(2);
  });

  it('hours are separate rows: the same subscription and node an hour later is a new row', async () => {
    const { node, agent } = await g.enrolledAgent();
    const a = await subscription(await groupOn(node.id));
    agent.connect();
    await agent.sendUsage(1n, [{ subscriptionId: a, uplinkBytes: 1n, downlinkBytes: 2n }]);
    await usageFolded(g.s.deps.db);
    g.s.clock.advance(3600_000);
    await agent.sendUsage(2n, [{ subscriptionId: a, uplinkBytes: 3n, downlinkBytes: 4n }]);
    await usageFolded(g.s.deps.db);
    const u = await usageOf(a);
    expect(u.rows).toHaveLength(2);
    expect(u.used).toBe(10);
  });

  it('entries for unknown subscriptions are dropped and counted; the rest of the report is applied', async () => {
    const { node, agent } = await g.enrolledAgent();
    const a = await subscription(await groupOn(node.id));
    agent.connect();
    await agent.sendUsage(1n, [
      { subscriptionId: 'sub_gone', uplinkBytes: 50n, downlinkBytes: 50n },
      { subscriptionId: a, uplinkBytes: 7n, downlinkBytes: 0n },
      { subscriptionId: `${a}@svc`, uplinkBytes: 1n, downlinkBytes: 1n },
    ]);
    await usageFolded(g.s.deps.db);
    expect((await usageOf(a)).used).toBe(7);
    const t = await g.token();
    expect((await g.s.api.get(`/api/v1/nodes/${node.id}`, { token: t })).body.usage_entries_dropped).toBe(2);
    expect(
      await g.s.deps.db.selectFrom('usage_hourly').select('subscription_id').where('subscription_id', '=', 'sub_gone').execute(),
    ).toEqual([]);
  });

  it('concurrent reports of two nodes crediting the same subscriptions are all counted', async () => {
    const [{ node: nx, agent: x }, { node: ny, agent: y }] = [await g.enrolledAgent(), await g.enrolledAgent()];
    const group = await groupOn(nx.id, ny.id);
    const subs = [await subscription(group), await subscription(group), await subscription(group)];
    x.connect();
    y.connect();
    const sends: Promise<void>[] = [];
    for (let i = 1; i <= 10; i++) {
      const entries = subs.map((s) => ({ subscriptionId: s, uplinkBytes: 1n, downlinkBytes: 1n }));
      sends.push(x.sendUsage(BigInt(i), entries), y.sendUsage(BigInt(i), [...entries].reverse()));
    }
    await Promise.all(sends);
    await usageFolded(g.s.deps.db);
    for (const s of subs) expect((await usageOf(s)).used).toBe(40);
  });
});

describe('CertRenewal -> CertIssued (spec 4.1 rule 4, 5.1)', () => {
  it('issues a new certificate for the same CN from the CSR; the agent reconnects with it, after which the old one is refused', async () => {
    const { node, agent } = await g.enrolledAgent();
    agent.connect();
    await online(node.id);
    const old = { cert: agent.certPem, key: agent.keyPem };
    const pem = await agent.renewCertificate();
    const cert = new X509Certificate(pem);
    expect(cert.subject).toBe(`CN=${node.id}`);
    expect(cert.verify(new X509Certificate(g.caCertPem).publicKey)).toBe(true);
    expect(cert.serialNumber).not.toBe(new X509Certificate(old.cert).serialNumber);
    expect(agent.ended).toBeNull();
    const audit = await g.s.deps.db
      .selectFrom('audit_log')
      .selectAll()
      .where('action', '=', 'node.certificate_renewed')
      .where('entity_id', '=', node.id)
      .execute();
    expect(audit[0]).toMatchObject({ actor_type: 'node', actor_id: node.id });

    // Reconnect with the new identity; the replaced certificate is retired from then on.
    await agent.disconnect();
    agent.connect();
    await online(node.id);
    await agent.disconnect();
    const { AgentSimulator } = await import('@svc/testkit/agent-simulator');
    const stale = new AgentSimulator(agent.opts, node.id, old.cert, old.key);
    stale.connect();
    expect((await stale.waitForEnd()).code).toBe(Status.UNAUTHENTICATED);
    const view = (await g.s.api.get(`/api/v1/nodes/${node.id}`, { token: await g.token() })).body;
    expect(view.cert_not_after).toBe(new Date(cert.validTo).toISOString());
  });

  it('until the agent uses the new certificate the replaced one still connects (a crash mid-swap does not lock the node out)', async () => {
    const { node, agent } = await g.enrolledAgent();
    agent.connect();
    await online(node.id);
    const old = { cert: agent.certPem, key: agent.keyPem };
    await agent.renewCertificate();
    await agent.disconnect();
    agent.certPem = old.cert;
    agent.keyPem = old.key;
    agent.connect();
    await online(node.id);
    expect(agent.ended).toBeNull();
  });

  // A CSR that is not one: answered with CertIssued.error, the stream stays open (test/hostile-input.test.ts).
});

describe('ApplyResults that arrive together (one statement per turn)', () => {
  it('each node moves to its own newest applied revision, never backwards, and its last error is cleared', async () => {
    const nodes: string[] = [];
    for (let k = 0; k < 4; k++) {
      const { node } = await g.nodeWithToken();
      for (let r = 0; r < 3; r++) await changeNode(node.id);
      nodes.push(node.id);
    }
    const [a, b, c, d] = nodes as [string, string, string, string];
    await g.s.deps.db
      .updateTable('nodes')
      .set({ applied_revision: 3, last_apply_error: 'revision 2: failed' })
      .where('id', '=', a)
      .execute();
    const record = appliedRevisionWriter(g.s.deps);
    await Promise.all([record(a, 2), record(b, 2), record(b, 4), record(c, 3), record(b, 3), record('node_gone', 9)]);
    const rows = await Promise.all(nodes.map((id) => nodeRow(g, id)));
    expect(rows.map((r) => [r.id, r.applied_revision, r.last_apply_error])).toEqual([
      [a, 3, null],
      [b, 4, null],
      [c, 3, null],
      [d, 0, null],
    ]);
    expect(rows[0]?.last_apply_at).not.toBeNull();
    expect(rows[3]?.last_apply_at).toBeNull();
  });
});
