import { execFile, spawnSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { usageFolded } from '@svc/testkit';
import { peerMissing } from '@svc/testkit/peers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Gateway, nodeRow, startGateway } from './harness.ts';

/**
 * Wire compatibility with an independent gRPC implementation: Debian's python3-grpcio (C core,
 * system OpenSSL) with code generated at test time from our proto by grpc_tools.protoc.
 * Debian's interpreter on purpose: `python3` on PATH may be another one without these modules.
 */
const PYTHON = '/usr/bin/python3';
const PROTO_ROOT = fileURLToPath(new URL('../../../proto', import.meta.url));
const CLIENT = fileURLToPath(new URL('./python/agent_client.py', import.meta.url));
const run = promisify(execFile);

const probe = spawnSync(PYTHON, ['-c', 'import grpc, grpc_tools, cryptography'], { encoding: 'utf8', timeout: 30_000 });
const unavailable = probe.error ? probe.error.message : probe.status !== 0 ? (probe.stderr.trim().split('\n').at(-1) ?? 'failed') : null;
if (unavailable) {
  peerMissing('python3-grpcio', `${PYTHON} cannot import grpc, grpc_tools and cryptography (${unavailable})`);
  console.warn(
    `python client test skipped: ${PYTHON} cannot import grpc, grpc_tools and cryptography (${unavailable}); ` +
      'install python3-grpcio python3-grpc-tools python3-cryptography',
  );
}

let g: Gateway;
let dir: string;

beforeAll(async () => {
  if (unavailable) return;
  g = await startGateway();
  dir = await mkdtemp(join(tmpdir(), 'py-agent-'));
  await run(
    PYTHON,
    [
      '-m',
      'grpc_tools.protoc',
      `-I${PROTO_ROOT}`,
      `--python_out=${dir}`,
      `--grpc_python_out=${dir}`,
      'svc/controlplane/v1/controlplane.proto',
    ],
    { timeout: 60_000 },
  );
  await writeFile(join(dir, 'ca.pem'), g.caCertPem);
}, 120_000);

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
  if (g) await g.stop();
});

describe('an independent gRPC client (Debian python3-grpcio, code generated from our proto)', () => {
  it.skipIf(unavailable)(
    'Enroll: bad token UNAUTHENTICATED, a Python CSR signed with CN = node id; Sync: no client cert UNAUTHENTICATED, ' +
      'with it Hello -> DesiredState(1), ApplyResult and StatusReport stored, UsageReport acked twice but counted once',
    async () => {
      const t = await g.token();
      const { node, enrollToken } = await g.nodeWithToken();
      const client = await g.s.api.post('/api/v1/clients', { email: 'python@example.com' }, { token: t });
      expect(client.status, client.text).toBe(201);
      // Served by the node (an inbound of it in the subscription's access group): only then is its usage credited.
      const profile = await g.s.api.post(
        '/api/v1/inbound-profiles',
        { name: 'py-vless', protocol: 'vless', stream: { network: 'tcp', security: 'none' } },
        { token: t },
      );
      const inbound = await g.s.api.post('/api/v1/inbounds', { node_id: node.id, profile_id: profile.body.id, port: 443 }, { token: t });
      const group = await g.s.api.post('/api/v1/access-groups', { name: 'py-group', inbound_ids: [inbound.body.id] }, { token: t });
      expect(group.status, group.text).toBe(201);
      const sub = await g.s.api.post(
        '/api/v1/subscriptions',
        { client_id: client.body.id, access_group_ids: [group.body.id] },
        { token: t },
      );
      expect(sub.status, sub.text).toBe(201);
      const desiredRevision = Number((await nodeRow(g, node.id)).desired_revision);

      const arg = {
        target: g.endpoint,
        ca_file: join(dir, 'ca.pem'),
        gen_dir: dir,
        token: enrollToken,
        subscription_id: sub.body.id,
        timeout: 10,
      };
      let stdout: string;
      try {
        ({ stdout } = await run(PYTHON, [CLIENT, JSON.stringify(arg)], { timeout: 90_000 }));
      } catch (err) {
        const e = err as { stdout?: string; stderr?: string; message: string };
        throw new Error(`python agent failed: ${e.message}\nstdout: ${e.stdout}\nstderr: ${e.stderr}`);
      }
      const seen = JSON.parse(stdout.trim().split('\n').at(-1)!);
      // This client names no engine in Hello (xray_version ""): the node adopts "unknown", whose
      // state is what every engine accepts, with one new revision before the stream is admitted
      // (docs/agent-gateway.md, "Engines"); that revision is the one sent.
      const adopted = Number((await nodeRow(g, node.id)).desired_revision);
      expect(adopted).toBe(desiredRevision + 1);

      // Our extensions (spec 9.3) reach a client that knows only the spec's messages as oneof
      // kinds it skips: the control plane's clock and the node's (empty) DeviceDenials when the
      // stream opens (docs/limits.md); nothing else it does not expect.
      expect({ ...seen, skipped: [...seen.skipped].sort() }).toEqual({
        enroll_bad_token: 'UNAUTHENTICATED',
        node_id: node.id,
        cert_cn: node.id,
        cert_issuer_is_ca: true,
        cert_key_matches: true,
        ca_cert_matches: true,
        sync_no_cert: 'UNAUTHENTICATED',
        desired_revision: adopted,
        desired_has_xray: true,
        acks: [1, 1],
        sync_end: 'OK',
        skipped: ['clock', 'device_denials'],
      });

      const view = (await g.s.api.get(`/api/v1/nodes/${node.id}`, { token: t })).body;
      // Enroll said hostname 'py-enroll', agent_version 'py-0.9': these come from the Hello.
      expect(view).toMatchObject({ hostname: 'py-agent', agent_version: 'py-1.0', os: 'linux', arch: 'x64', enrolled: true });
      expect(view.applied_revision).toBe(seen.desired_revision);
      expect(view.last_apply_error).toBeNull();
      expect(view.status).toMatchObject({
        xray_running: true,
        cpu_percent: 12.5,
        memory_used_bytes: 1000,
        memory_total_bytes: 4000,
        disk_used_bytes: 5000,
        disk_total_bytes: 9000,
        connections: 3,
        xray_uptime_seconds: 60,
      });
      // Acknowledged means staged; the fold credits it right after.
      await usageFolded(g.s.deps.db);
      const used = await g.s.deps.db
        .selectFrom('subscription_counters')
        .select('used_bytes')
        .where('subscription_id', '=', sub.body.id)
        .executeTakeFirstOrThrow();
      expect(Number(used.used_bytes)).toBe(300);
      expect(Number((await nodeRow(g, node.id)).last_usage_report_id)).toBe(1);
    },
    120_000,
  );
});
