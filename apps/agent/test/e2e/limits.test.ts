import {
  decodeSubscriptionBody,
  fetchSubscription,
  fleetOverRest,
  httpGetThroughProxy,
  parseShareLink,
  type ShareLink,
  streamThroughProxy,
  subscriptionUsage,
} from '@svc/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type CountingServer,
  clientFor,
  enginePid,
  eventually,
  type Loop,
  skipReason,
  startCountingServer,
  startLoop,
  waitForApplied,
} from './loop.ts';

/**
 * Hot user changes on a real engine: a subscription that reaches its traffic limit is cut off
 * within seconds, open connection included, while another user of the same inbound keeps their
 * open connection, and the engine is never restarted (same process). Peers restart Xray on every
 * change and every user drops.
 */
if (skipReason) console.warn(`agent end-to-end tests skipped: ${skipReason}`);

let loop: Loop;
let dest: CountingServer;
const LIMIT = 400_000;

const onlyLink = async (url: string): Promise<ShareLink> => {
  const links = decodeSubscriptionBody((await fetchSubscription(url)).body).map(parseShareLink);
  expect(links).toHaveLength(1);
  return links[0] as ShareLink;
};

beforeAll(async () => {
  if (skipReason) return;
  dest = await startCountingServer();
  loop = await startLoop(['vmess-tcp']);
}, 120_000);

afterAll(async () => {
  await loop?.stop();
  await dest?.close();
});

describe.skipIf(skipReason)('hot user changes through the engine API (no restart)', () => {
  it('a new subscription is served without a restart; its limit reached, its open connection ends within seconds while another user’s stays up', async () => {
    const pid = await enginePid(loop.stateDir);
    expect(pid).toBeGreaterThan(0);
    const api = loop.cp.api;
    // B: another customer on the same inbound, added while the node runs.
    const clientB = await fleetOverRest.createClient(api);
    const subB = await fleetOverRest.createSubscription(api, { clientId: clientB.id, accessGroupIds: [loop.fleet.accessGroupId] });
    // A: the fleet's subscription, now with a limit.
    const patched = await api.patch(`/api/v1/subscriptions/${loop.fleet.subscription.id}`, { traffic_limit_bytes: LIMIT });
    expect(patched.status, patched.text).toBe(200);
    await waitForApplied(loop);
    await eventually(
      async () => (loop.agent.lines.some((l) => l.includes('users changed without a restart')) ? true : undefined),
      'the hot add',
    );
    expect(await enginePid(loop.stateDir)).toBe(pid);

    const a = await clientFor(await onlyLink(loop.fleet.subscriptionUrl));
    const b = await clientFor(await onlyLink(subB.link));
    try {
      const streamA = streamThroughProxy(a.port, `${dest.url}/stream`);
      const streamB = streamThroughProxy(b.port, `${dest.url}/stream`);
      expect((await streamA.opened).status).toBe(200);
      expect((await streamB.opened).status).toBe(200);
      // A goes past its limit.
      expect((await httpGetThroughProxy(a.port, `${dest.url}/bytes/${LIMIT}`)).status).toBe(200);
      const cutAt = Date.now();
      const endA = await Promise.race([streamA.ended, new Promise<null>((r) => setTimeout(() => r(null), 30_000))]);
      expect(endA, 'A’s open connection ended').not.toBeNull();
      const seconds = (Date.now() - cutAt) / 1000;
      const sub = await subscriptionUsage(api, loop.fleet.subscription.id);
      expect(sub.status).toBe('limited');
      // B's connection lives on after A's cut: it keeps receiving.
      const bBefore = streamB.received();
      await new Promise((r) => setTimeout(r, 1500));
      expect(streamB.received()).toBeGreaterThan(bBefore);
      // A's new connections are refused; B's new ones work.
      const refused = await httpGetThroughProxy(a.port, `${dest.url}/bytes/10`, { signal: AbortSignal.timeout(5000) }).catch(() => null);
      expect(refused?.status === 200 && refused.bytes === 10).toBe(false);
      expect((await httpGetThroughProxy(b.port, `${dest.url}/bytes/10`)).status).toBe(200);
      // No restart: the same engine process, and the agent says how it ended A's connection.
      expect(await enginePid(loop.stateDir)).toBe(pid);
      expect(loop.agent.lines.some((l) => l.includes('connections of removed users ended'))).toBe(true);
      console.info(`A was cut ${seconds.toFixed(1)} s after going past its limit`);
      streamB.close();
    } finally {
      await a.stop();
      await b.stop();
    }
  });
});
