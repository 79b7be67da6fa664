import { decodeSubscriptionBody, fetchSubscription, httpGetThroughProxy, parseShareLink, subscriptionUsage } from '@svc/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type CountingServer,
  clientFor,
  enginePid,
  eventually,
  type Loop,
  skipReason,
  sleep,
  startCountingServer,
  startLoop,
} from './loop.ts';

/**
 * Usage survives every crash (issue 13.4): while traffic flows, the agent is killed with -9 and
 * started again, then the control plane; at the end the subscription's used bytes equal what
 * crossed the destination's sockets exactly: nothing lost, nothing counted twice. The engine
 * keeps serving through the agent's crash (the new agent adopts it).
 */
if (skipReason) console.warn(`agent end-to-end tests skipped: ${skipReason}`);

let loop: Loop;
let dest: CountingServer;

beforeAll(async () => {
  if (skipReason) return;
  dest = await startCountingServer();
  loop = await startLoop(['vmess-tcp']);
}, 120_000);

afterAll(async () => {
  await loop?.stop();
  await dest?.close();
});

describe.skipIf(skipReason)('usage through kill -9 of the agent and of the control plane', () => {
  it('the sums equal the bytes sent; the engine kept serving through the agent’s crash', async () => {
    const link = decodeSubscriptionBody((await fetchSubscription(loop.fleet.subscriptionUrl)).body).map(parseShareLink)[0];
    if (!link) throw new Error('no link');
    const client = await clientFor(link);
    const pid = await enginePid(loop.stateDir);
    let running = true;
    let requests = 0;
    let failures = 0;
    const traffic = (async () => {
      while (running) {
        const r = await httpGetThroughProxy(client.port, `${dest.url}/bytes/${20_000 + (requests % 7) * 3_000}`).catch(() => null);
        if (r?.status === 200) requests++;
        else failures++;
      }
    })();
    try {
      await sleep(2500);
      await loop.agent.kill();
      await sleep(1500);
      await loop.restartAgent();
      // The new agent adopted the engine that kept serving: no restart, nobody dropped.
      expect(await enginePid(loop.stateDir)).toBe(pid);
      expect(loop.agent.lines.some((l) => l.includes('adopted'))).toBe(true);
      await sleep(2500);
      await loop.cp.kill9();
      await sleep(2000);
      await loop.cp.restart();
      await sleep(2500);
    } finally {
      running = false;
      await traffic;
      await client.stop();
    }
    expect(requests).toBeGreaterThan(20);
    const sent = () => dest.totals().uplink + dest.totals().downlink;
    const usage = await eventually(
      async () => {
        const u = await subscriptionUsage(loop.cp.api, loop.fleet.subscription.id);
        return u.used_bytes >= sent() ? u : undefined;
      },
      'all usage credited',
      90_000,
    );
    // Settle: nothing more arrives after the sums met.
    await sleep(3000);
    const final = await subscriptionUsage(loop.cp.api, loop.fleet.subscription.id);
    expect(final.used_bytes).toBe(usage.used_bytes);
    expect(final.used_bytes).toBe(sent());
    expect(final.uplink_bytes).toBe(dest.totals().uplink);
    expect(final.downlink_bytes).toBe(dest.totals().downlink);
    console.info(`${requests} requests (${failures} failed), ${sent()} bytes, credited ${final.used_bytes}`);
  }, 180_000);
});
