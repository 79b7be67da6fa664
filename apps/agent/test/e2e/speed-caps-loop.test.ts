import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { get } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeSubscriptionBody, fetchSubscription, fleetOverRest, parseShareLink, v2rayClientFromLink } from '@svc/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeNetns, sh, shapingSkipReason, vethPair } from '../shaping/netns.ts';
import {
  type CountingServer,
  eventually,
  type Loop,
  skipReason as noV2ray,
  sleep,
  startCountingServer,
  startLoop,
  waitForApplied,
} from './loop.ts';

/**
 * Speed caps across the whole loop (issue 36.2 and 36.4): the admin API sets a 1 Mbit/s
 * download cap on one subscription, the control plane compiles it into the node's desired state
 * (NodeConfig.user_limits), and the agent under it (`svc-agent run`, Debian's v2ray, speed caps
 * on the veth the test names in SVC_AGENT_SHAPE_DEVICES) shapes that user's connections in the
 * kernel while an uncapped user of the same inbound, at the same time, runs many times faster.
 * The clients are v2ray in a network namespace of the test's own behind a veth pair; the node's
 * side of the pair is in this (the host's) namespace, where the agent and its engine run, so
 * the test's names are its own (`svclp-*`) and nothing else of the host is shaped.
 */
const CLI = 'svclp-cli';
const HOST_DEV = 'svclp-h';
const CLI_DEV = 'svclp-c';
const CAP = 1_000_000;

function skipReason(): string | null {
  return noV2ray ?? shapingSkipReason([['ss', '-V']]);
}
const skip = skipReason();
if (skip) console.warn(`speed-cap loop test skipped: ${skip}`);

let loop: Loop | undefined;
let dest: CountingServer | undefined;
let client: ChildProcess | undefined;
let dir = '';

beforeAll(async () => {
  if (skip) return;
  vethPair(
    { ns: null, dev: HOST_DEV, addresses: ['10.89.0.1/24'] },
    { ns: CLI, dev: CLI_DEV, addresses: ['10.89.0.2/24'], congestionControl: 'reno' },
  );
  dest = await startCountingServer();
  dir = mkdtempSync(join(tmpdir(), 'svc-caps-loop-'));
  loop = await startLoop(['vmess-tcp'], { SVC_AGENT_SHAPE_DEVICES: HOST_DEV });
}, 120_000);

afterAll(async () => {
  client?.kill();
  await loop?.stop();
  await dest?.close();
  // The agent removed what it installed when it stopped: the veth and the namespace are the test's.
  removeNetns([CLI], [HOST_DEV]);
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/**
 * Bytes per second of a download through `port` (a dokodemo-door of the client, in its
 * namespace, to the counting server at `destPort`), measured from 2.5 s to 7 s (or over the
 * whole transfer when it ended sooner). The Host header
 * names the counting server: the node's inbound sniffs HTTP and would go where the Host says.
 */
function download(port: number, destPort: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const samples: Array<[number, number]> = [];
    let got = 0;
    const t0 = Date.now();
    const req = get(
      { host: '10.89.0.2', port, path: `/bytes/${64 * 1024 * 1024}`, headers: { host: `127.0.0.1:${destPort}` }, agent: false },
      (res) => {
        res.on('data', (d: Buffer) => {
          got += d.length;
        });
        res.on('error', () => {});
      },
    );
    req.on('error', (err) => {
      if (!finished) reject(err);
    });
    let finished = false;
    const tick = setInterval(() => samples.push([Date.now() - t0, got]), 100);
    setTimeout(() => {
      finished = true;
      clearInterval(tick);
      req.destroy();
      const from = samples.find(([t]) => t >= 2500);
      // Until the transfer ended (an uncapped one carries the whole 64 MiB in well under a second).
      const to = samples.find(([, bytes]) => bytes === got) ?? samples.at(-1);
      if (!from || !to) return reject(new Error('no samples'));
      if (to[0] <= from[0]) return resolve(to[0] > 0 ? (to[1] / to[0]) * 1000 : Number.POSITIVE_INFINITY);
      resolve(((to[1] - from[1]) / (to[0] - from[0])) * 1000);
    }, 7000);
  });
}

describe.skipIf(skip)('speed caps through the whole loop', () => {
  it('a 1 Mbit/s download cap set in the admin API measures within ±20% on the node while an uncapped user of the same inbound runs more than 5x faster; the node says it shapes its veth', async () => {
    const l = loop as Loop;
    const api = l.cp.api;
    const group = [l.fleet.accessGroupId];
    const capped = await fleetOverRest.createSubscription(api, {
      clientId: (await fleetOverRest.createClient(api)).id,
      accessGroupIds: group,
    });
    const free = await fleetOverRest.createSubscription(api, {
      clientId: (await fleetOverRest.createClient(api)).id,
      accessGroupIds: group,
    });
    const patched = await api.patch(`/api/v1/subscriptions/${capped.id}`, { download_bps: CAP });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body).toMatchObject({ download_bps: CAP, upload_bps: null });
    await waitForApplied(l);
    const enforcement = await eventually(async () => {
      const node = (await api.get(`/api/v1/nodes/${l.fleet.node.id}`)).body;
      return node.enforcement?.speed_caps === true ? node.enforcement : undefined;
    }, 'the node says it enforces speed caps');
    expect(enforcement).toMatchObject({
      speed_caps: true,
      speed_caps_error: '',
      shaped_devices: [HOST_DEV, expect.stringMatching(/^svcup\d+$/)],
    });
    // The desired state caps someone: the node's veth has the HTB root before anyone connects
    // (the limits take effect on the pass the desired state starts, just after it is applied).
    const qdisc = await eventually(async () => {
      const shown = sh('tc', 'qdisc', 'show', 'dev', HOST_DEV);
      return /htb 5c00: root/.test(shown) ? shown : undefined;
    }, 'the HTB root on the node’s veth');
    expect(qdisc).toMatch(/htb 5c00: root/);

    // The clients: v2ray in the namespace, a dokodemo-door per user to the counting server (as the engine sees it).
    const destPort = Number(new URL((dest as CountingServer).url).port);
    const linkOf = async (url: string) => parseShareLink(decodeSubscriptionBody((await fetchSubscription(url)).body)[0] as string);
    const links = [await linkOf(capped.link), await linkOf(free.link)];
    const outbounds = links.map((link, k) => {
      const o = (v2rayClientFromLink(link, { httpProxyPort: 1 }).outbounds as Array<Record<string, any>>)[0] as Record<string, any>;
      o.settings.vnext[0].address = '10.89.0.1';
      return { ...o, tag: `out${k}` };
    });
    writeFileSync(
      join(dir, 'client.json'),
      JSON.stringify({
        log: { loglevel: 'warning' },
        inbounds: [0, 1].map((k) => ({
          tag: `in${k}`,
          listen: '10.89.0.2',
          port: 12001 + k,
          protocol: 'dokodemo-door',
          settings: { address: '127.0.0.1', port: destPort, network: 'tcp' },
        })),
        outbounds,
        routing: { rules: [0, 1].map((k) => ({ type: 'field', inboundTag: [`in${k}`], outboundTag: `out${k}` })) },
      }),
    );
    client = spawn('ip', ['netns', 'exec', CLI, 'v2ray', '-config', join(dir, 'client.json')], { stdio: 'ignore' });
    await sleep(1500);

    const c = download(12001, destPort);
    await sleep(1500);
    const f = download(12002, destPort);
    const [cRate, fRate] = await Promise.all([c, f]).catch((err) => {
      console.log(
        'agent log (last 40 lines above debug):',
        l.agent.lines
          .filter((x) => !x.includes('"level":20'))
          .slice(-40)
          .join('\n'),
      );
      throw err;
    });
    console.info(`through the loop: capped ${((cRate * 8) / 1e6).toFixed(3)} Mbit/s, uncapped ${((fRate * 8) / 1e6).toFixed(1)} Mbit/s`);
    expect(cRate * 8).toBeGreaterThan(CAP * 0.8);
    expect(cRate * 8).toBeLessThan(CAP * 1.2);
    expect(fRate).toBeGreaterThan(5 * cRate);

    // The cap lifted in the admin API: the next revision removes everything the agent installed.
    expect((await api.patch(`/api/v1/subscriptions/${capped.id}`, { download_bps: null })).status).toBe(200);
    await waitForApplied(l);
    await eventually(async () => (/htb/.test(sh('tc', 'qdisc', 'show', 'dev', HOST_DEV)) ? undefined : true), 'the HTB root removed');
    expect(sh('nft', 'list', 'tables')).not.toContain('svc_shape');
  }, 120_000);
});
