import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ControlPlane, fleetOverRest, issueEnrollToken, spawnApp, startControlPlane } from '@svc/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentEnv } from './loop.ts';

/**
 * `svc-agent enroll` against a real control plane (spec 5.1): the CA is pinned by its SHA-256
 * before anything is sent, the key never leaves the node, the identity is stored 0600, and a
 * token works once.
 */
let cp: ControlPlane;
let dir: string;

beforeAll(async () => {
  cp = await startControlPlane();
  dir = await mkdtemp(join(tmpdir(), 'svc-agent-enroll-'));
}, 120_000);

afterAll(async () => {
  await cp?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function enroll(stateDir: string, args: string[]) {
  const p = spawnApp('apps/agent/src/main.ts', agentEnv(stateDir), ['enroll', ...args]);
  const e = await p.exited;
  return { code: e.code, out: `${p.lines.join('\n')}\n${p.stderr()}` };
}

describe('svc-agent enroll: the CA is pinned before the token is sent', () => {
  it('a wrong --ca-sha256 stops before the token is sent (it still enrolls afterwards); the identity is 0600; the token works once', async () => {
    const node = await fleetOverRest.createNode(cp.api, { address: '127.0.0.1' });
    const issued = await issueEnrollToken(cp.api, node.id);
    const stateDir = join(dir, 'node-a');
    const wrongPin = 'ab'.repeat(32);
    const refused = await enroll(stateDir, ['--server', issued.grpc_endpoint, '--token', issued.token, '--ca-sha256', wrongPin]);
    expect(refused.code).toBe(1);
    expect(refused.out).toContain('presented no CA with SHA-256');
    expect((await cp.api.get(`/api/v1/nodes/${node.id}`)).body.enrolled).toBe(false);

    const ok = await enroll(stateDir, ['--server', issued.grpc_endpoint, '--token', issued.token, '--ca-sha256', issued.ca_cert_sha256]);
    expect(ok.code, ok.out).toBe(0);
    expect(JSON.parse(ok.out.split('\n')[0] as string)).toMatchObject({ msg: 'enrolled', node_id: node.id });
    const file = join(stateDir, 'identity.json');
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect((await stat(stateDir)).mode & 0o777).toBe(0o700);
    const identity = JSON.parse(await readFile(file, 'utf8'));
    expect(identity).toMatchObject({ nodeId: node.id, server: issued.grpc_endpoint });
    expect(identity.keyPem).toContain('PRIVATE KEY');
    expect((await cp.api.get(`/api/v1/nodes/${node.id}`)).body.enrolled).toBe(true);

    // The same token again, elsewhere: refused by the gateway, with a message an operator understands.
    const again = await enroll(join(dir, 'node-b'), [
      '--server',
      issued.grpc_endpoint,
      '--token',
      issued.token,
      '--ca-sha256',
      issued.ca_cert_sha256,
    ]);
    expect(again.code).toBe(1);
    expect(again.out).toContain('invalid, expired or already used');
    // And an identity is not replaced by accident.
    const fresh = await issueEnrollToken(cp.api, node.id);
    const over = await enroll(stateDir, ['--server', fresh.grpc_endpoint, '--token', fresh.token, '--ca-sha256', fresh.ca_cert_sha256]);
    expect(over.code).toBe(1);
    expect(over.out).toContain('--force');
  });

  it('bad arguments exit 64 with the usage and touch nothing', async () => {
    const stateDir = join(dir, 'node-c');
    const r = await enroll(stateDir, ['--server', 'no-port', '--token', 't']);
    expect(r.code).toBe(64);
    expect(r.out).toContain('--ca-sha256 is required');
    await expect(stat(stateDir)).rejects.toThrow();
  });
});
