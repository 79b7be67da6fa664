import { afterEach, describe, expect, it } from 'vitest';
import { type ControlPlane, startControlPlane } from './control-plane-process.ts';

const TIMEOUT_MS = 180_000;
const started: ControlPlane[] = [];
afterEach(async () => {
  while (started.length) await started.pop()?.stop();
});

describe('startControlPlane', () => {
  it(
    'runs svc start as a set-up installation: healthy, the owner signed in, the gateway named in enrollment tokens',
    async () => {
      const cp = await startControlPlane();
      started.push(cp);
      expect((await fetch(`${cp.http}/healthz`)).status).toBe(200);
      const me = await cp.api.get('/api/v1/auth/me');
      expect(me.status, me.text).toBe(200);
      expect(me.body).toMatchObject({ email: 'e2e-owner@example.com' });
      expect((await cp.api.get('/api/v1/auth/methods')).body.setup_required).toBe(false);
      // Every HTTP surface on the one port: the portal, and the worker's payment webhook ingress
      // (a provider it does not know is the ingress's 404, not a missing route).
      expect((await fetch(`${cp.http}/portal/v1/auth/methods`)).status).toBe(200);
      const hook = await fetch(`${cp.http}/webhooks/payments/ppr_nothere`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{}',
      });
      expect(hook.status).toBe(404);
      expect(((await hook.json()) as { type: string }).type).toBe('urn:svc:problem:not-found');

      const node = await cp.api.post('/api/v1/nodes', { name: 'cp-test', address: '127.0.0.1' });
      expect(node.status, node.text).toBe(201);
      const enroll = await cp.api.post(`/api/v1/nodes/${node.body.id}/enroll-token`);
      expect(enroll.status, enroll.text).toBe(201);
      expect(enroll.body.grpc_endpoint).toBe(cp.grpcEndpoint);
      expect(cp.grpcEndpoint).toBe(`127.0.0.1:${cp.grpcPort}`);
    },
    TIMEOUT_MS,
  );

  it(
    'after kill -9, restart comes back on the same ports with the data (the node, the owner) kept',
    async () => {
      const cp = await startControlPlane();
      started.push(cp);
      const node = await cp.api.post('/api/v1/nodes', { name: 'survives-kill', address: '127.0.0.1' });
      expect(node.status, node.text).toBe(201);
      const before = cp.process;

      await cp.kill9();
      expect((await before.exited).signal).toBe('SIGKILL');
      await cp.restart();

      expect(cp.process).not.toBe(before);
      // The new process prints no setup token: the owner made before the kill is still there.
      expect(cp.process.lines.some((l) => l.includes('"setup_token"'))).toBe(false);
      const again = await cp.api.get(`/api/v1/nodes/${node.body.id}`);
      expect(again.status, again.text).toBe(200);
      expect(again.body).toMatchObject({ name: 'survives-kill', address: '127.0.0.1' });
      expect(cp.http).toBe(`http://127.0.0.1:${cp.httpPort}`);
    },
    TIMEOUT_MS,
  );
});
