import { createPrivateKey, X509Certificate } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ControlPlane, fleetOverRest, issueEnrollToken, startControlPlane } from '@svc/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Agent } from '../../src/agent.ts';
import { engineSettingsFrom } from '../../src/engine/engine-settings.ts';
import { enroll } from '../../src/enroll.ts';
import { renewalSchedule } from '../../src/identity.ts';
import { agentEnv, enginePid, eventually, skipReason } from './loop.ts';

/**
 * Certificate renewal over the open stream (spec 5.1 "The agent renews its certificate over the
 * open stream (CertRenewal, CertIssued)"; issue 13.2): at two thirds of the certificate's lifetime
 * the agent makes a new key, sends a CSR on the Sync stream, checks what comes back against its
 * key, the pinned CA and its node id, and replaces identity.json atomically; the next stream
 * authenticates with the new certificate. The agent runs in this process so that its clock can
 * be moved; the control plane is a real `svc start`.
 */
const DAY = 86_400_000;
let cp: ControlPlane;
let dir: string;
const agents: Agent[] = [];

beforeAll(async () => {
  if (skipReason) return;
  cp = await startControlPlane();
  dir = await mkdtemp(join(tmpdir(), 'svc-agent-renew-'));
}, 120_000);

afterAll(async () => {
  for (const a of agents) await a.stop().catch(() => {});
  if (dir) {
    const pid = await enginePid(dir);
    if (pid) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {}
    }
    await rm(dir, { recursive: true, force: true });
  }
  await cp?.stop();
});

const readIdentity = async () =>
  JSON.parse(await readFile(join(dir, 'identity.json'), 'utf8')) as { certPem: string; keyPem: string; caCertPem: string; nodeId: string };

function startAgent(now?: () => number): Agent {
  const env = agentEnv(dir);
  const agent = new Agent({
    stateDir: dir,
    engine: engineSettingsFrom(env),
    logLevel: 'warn',
    statusEveryMs: 2000,
    usageEveryMs: 1000,
    now,
  });
  agents.push(agent);
  return agent;
}

async function online(nodeId: string): Promise<Record<string, any>> {
  return eventually(async () => {
    const n = (await cp.api.get(`/api/v1/nodes/${nodeId}`)).body;
    return n.connectivity === 'online' ? n : undefined;
  }, 'the node online');
}

describe.skipIf(skipReason)('certificate renewal over the stream (CertRenewal, CertIssued)', () => {
  it('past two thirds of its lifetime the certificate is renewed with a new key, saved 0600 in place, and the next stream uses it', async () => {
    const node = await fleetOverRest.createNode(cp.api, { address: '127.0.0.1' });
    const issued = await issueEnrollToken(cp.api, node.id);
    await enroll({ server: issued.grpc_endpoint, token: issued.token, caSha256: issued.ca_cert_sha256, stateDir: dir, force: false });
    const before = await readIdentity();
    const first = new X509Certificate(before.certPem);
    const { renewAt } = renewalSchedule(before.certPem);

    // Before two thirds of the lifetime: nothing is renewed.
    const early = startAgent();
    await early.start();
    expect((await online(node.id)).cert_not_after).toBe(new Date(first.validTo).toISOString());
    await new Promise((r) => setTimeout(r, 1500));
    expect((await readIdentity()).certPem).toBe(before.certPem);
    await early.stop();

    // A clock one day past the renewal point: the stream opens with the old certificate, then renews.
    const shift = renewAt.getTime() - Date.now() + DAY;
    const late = startAgent(() => Date.now() + shift);
    await late.start();
    const after = await eventually(async () => {
      const id = await readIdentity();
      return id.certPem !== before.certPem ? id : undefined;
    }, 'a renewed identity.json');
    const second = new X509Certificate(after.certPem);
    expect(after.keyPem).not.toBe(before.keyPem);
    expect(second.serialNumber).not.toBe(first.serialNumber);
    expect(second.checkPrivateKey(createPrivateKey(after.keyPem))).toBe(true);
    expect(second.verify(new X509Certificate(after.caCertPem).publicKey)).toBe(true);
    expect(after.nodeId).toBe(node.id);
    expect(after.caCertPem).toBe(before.caCertPem);
    const view = (await cp.api.get(`/api/v1/nodes/${node.id}`)).body;
    expect(view.cert_not_after).toBe(new Date(second.validTo).toISOString());
    const audit = await cp.api.get(`/api/v1/audit-log?entity_type=node&entity_id=${node.id}`);
    expect(audit.status, audit.text).toBe(200);
    const renewed = audit.body.items.find((e: { action: string }) => e.action === 'node.certificate_renewed');
    expect(renewed?.details).toMatchObject({ serial: expect.any(String), replaced_serial: expect.any(String) });
    await late.stop();

    // Once more (the gateway then accepts only the two newest certificates, so the very first
    // one no longer opens a stream): the agent must use what it saved.
    const later = startAgent(() => Date.now() + shift);
    await later.start();
    const third = await eventually(async () => {
      const id = await readIdentity();
      return id.certPem !== after.certPem ? id : undefined;
    }, 'a second renewal');
    await later.stop();

    // The next agent (a real clock) connects with the newest certificate and renews nothing.
    const next = startAgent();
    await next.start();
    const again = await eventually(async () => {
      const n = (await cp.api.get(`/api/v1/nodes/${node.id}`)).body;
      return n.connectivity === 'online' && n.status?.xray_running === true ? n : undefined;
    }, 'the node online, its engine running after the agents’ clean stops');
    expect(again.cert_not_after).toBe(new Date(new X509Certificate(third.certPem).validTo).toISOString());
    await new Promise((r) => setTimeout(r, 1500));
    expect((await readIdentity()).certPem).toBe(third.certPem);
    await next.stop();
  });
});
