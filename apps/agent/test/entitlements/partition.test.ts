import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CutoffReason, DesiredState, type Inbound, type InboundUser, Network, NodeConfig, Protocol, SecurityT } from '@svc/proto';
import { type AppProcess, httpGetThroughProxy, spawnApp, streamThroughProxy, v2rayClientConfig } from '@svc/testkit';
import { type EngineProcess, freePort, startV2ray } from '@svc/testkit/engine-process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentEnv, type CountingServer, enginePid, eventually, killEngine, skipReason, sleep, startCountingServer } from '../e2e/loop.ts';
import { type StandInGateway, standInGateway } from './stand-in-gateway.ts';

/**
 * Entitlements while the control plane is away (issue 36.3, Checked by), on Debian's v2ray under
 * the real agent (`svc-agent run` as a process). The control plane is played on the wire by a
 * stand-in gateway (stand-in-gateway.ts: ServerClock and the desired state with UserLimits when
 * a stream opens; usage and cutoffs recorded once per report id, as the control plane does), so
 * the test owns the clock of the entitlements and the moment the control plane goes.
 *
 * Three users of one VMess inbound: A with a not-after a few seconds after the control plane
 * goes, B with a traffic slice, C with neither. With the gateway stopped: A's open connection
 * ends within seconds of its not-after (and not before), B is cut once it carried its slice
 * (the bytes past it bounded), C's open stream and new requests carry on, the engine is the same
 * process throughout. With the gateway back: each cut reported once, usage recorded once (C's to
 * the byte), and a new desired state (later not-after, new slice) serves A and B again.
 */
if (skipReason) console.warn(`entitlements partition test skipped: ${skipReason}`);

const AGENT = 'apps/agent/src/main.ts';
const SLICE = 1_500_000n;
const plainTcp = { network: Network.TCP, security: SecurityT.NONE, tcp: { acceptProxyProtocol: false } };

let gw: StandInGateway;
let stateDir: string;
let agent: AppProcess;
let client: EngineProcess;
const dest: Record<'a' | 'b' | 'c', CountingServer> = {} as never;
const proxy: Record<'a' | 'b' | 'c', number> = {} as never;
const users: Record<'a' | 'b' | 'c', InboundUser> = {} as never;
const sub = (k: 'a' | 'b' | 'c') => `sub-${k}`;
let inbound: Inbound;

function desired(revision: bigint, limits: { aNotAfter: bigint; bSlice: bigint; bBytes: bigint }): DesiredState {
  return DesiredState.fromPartial({
    revision,
    config: NodeConfig.fromPartial({
      xray: { inbounds: [inbound], outbounds: [{ tag: 'direct', protocol: Protocol.FREEDOM }] },
      userLimits: [
        { subscriptionId: sub('a'), notAfterMs: limits.aNotAfter },
        { subscriptionId: sub('b'), sliceId: limits.bSlice, sliceBytes: limits.bBytes },
      ],
    }),
  });
}

beforeAll(async () => {
  if (skipReason) return;
  for (const k of ['a', 'b', 'c'] as const) {
    dest[k] = await startCountingServer();
    proxy[k] = await freePort();
    users[k] = { email: `${sub(k)}@svc`, vmess: { id: randomUUID() } } as InboundUser;
  }
  inbound = {
    tag: 'vmess-in',
    protocol: Protocol.VMESS,
    port: await freePort(),
    listen: '127.0.0.1',
    stream: plainTcp,
    sniffing: undefined,
    users: Object.values(users),
  } as unknown as Inbound;
  gw = standInGateway(await freePort());
  await gw.start();
  stateDir = await mkdtemp(join(tmpdir(), 'svc-agent-entitlements-'));
  await writeFile(join(stateDir, 'identity.json'), JSON.stringify(gw.identity), { mode: 0o600 });
  client = await startV2ray(
    v2rayClientConfig(
      (['a', 'b', 'c'] as const).map((k) => ({
        proxyPort: proxy[k],
        server: { address: '127.0.0.1', port: inbound.port },
        inbound,
        user: users[k],
      })),
    ),
    { name: 'clients', waitForPorts: Object.values(proxy) },
  );
}, 60_000);

afterAll(async () => {
  await agent?.stop();
  if (stateDir) await killEngine(stateDir);
  await client?.stop();
  await gw?.stop();
  for (const d of Object.values(dest)) await d?.close();
  if (stateDir) await rm(stateDir, { recursive: true, force: true });
});

describe.skipIf(skipReason)('entitlements enforced by the agent while the control plane is away', () => {
  it('time and slice cut within seconds, others served, no engine restart; back online, cutoffs and usage recorded once and new limits serve again', async () => {
    gw.setDesired(desired(1n, { aNotAfter: BigInt(Date.now() + 3_600_000), bSlice: 1n, bBytes: SLICE }));
    // Usage collected every 10 s (the default): the slice is watched between collections.
    agent = spawnApp(AGENT, { ...agentEnv(stateDir), SVC_AGENT_USAGE_INTERVAL_SECONDS: '10' }, ['run']);
    await eventually(async () => (gw.applied.includes(1n) ? true : undefined), 'revision 1 applied', 45_000);
    await eventually(
      async () => (gw.statuses.some((s) => s.enforcement?.entitlements) ? true : undefined),
      'StatusReport.enforcement.entitlements',
    );
    const pid = await enginePid(stateDir);
    expect(pid).toBeGreaterThan(0);
    // A's not-after moves to a few seconds from now: a change of limits alone, applied without touching the engine.
    const notAfter = BigInt(Date.now() + 8_000);
    gw.setDesired(desired(2n, { aNotAfter: notAfter, bSlice: 1n, bBytes: SLICE }));
    await eventually(async () => (gw.applied.includes(2n) ? true : undefined), 'revision 2 applied');

    const streamA = streamThroughProxy(proxy.a, `${dest.a.url}/stream`);
    const streamC = streamThroughProxy(proxy.c, `${dest.c.url}/stream`);
    expect((await streamA.opened).status).toBe(200);
    expect((await streamC.opened).status).toBe(200);
    // When A's stream ends, noted as it happens (B's fetches below may still be running then).
    const aEnded = streamA.ended.then(() => Date.now());

    // The control plane goes.
    await gw.stop();
    await agent.waitForLog(/^Sync stream ended$/, 15_000);

    // B fetches 100 KB about every 100 ms until it is refused: three refusals in a row (a cut
    // user stays cut; one failed fetch on a busy machine is not a cut), the cut dated at the first.
    let bReceived = 0;
    let bCutAt = 0;
    let failedSince = 0;
    let failures = 0;
    for (let i = 0; i < 200 && bCutAt === 0; i++) {
      const began = Date.now();
      const r = await httpGetThroughProxy(proxy.b, `${dest.b.url}/bytes/100000`, { signal: AbortSignal.timeout(5000) }).catch(() => null);
      if (r?.status === 200 && r.bytes === 100_000) {
        bReceived += r.bytes;
        failures = 0;
      } else {
        if (failures++ === 0) failedSince = began;
        if (failures === 3) bCutAt = failedSince;
      }
      await sleep(Math.max(0, 100 - (Date.now() - began)));
    }
    expect(bCutAt, 'B was cut').toBeGreaterThan(0);
    const bOver = bReceived - Number(SLICE);
    console.info(`B received ${bReceived} bytes through a slice of ${SLICE} (${bOver} past it)`);
    expect(bReceived).toBeGreaterThanOrEqual(Number(SLICE) - 200_000);
    expect(bOver).toBeLessThan(2_500_000);

    // A: its open stream ends within seconds of its not-after, not before.
    const aEndedAt = await Promise.race([aEnded, sleep(40_000).then(() => null)]);
    expect(aEndedAt, 'A’s stream ended').not.toBeNull();
    const late = (aEndedAt as number) - Number(notAfter);
    console.info(`A's stream ended ${late} ms after its not-after`);
    expect(late).toBeGreaterThanOrEqual(0);
    expect(late).toBeLessThan(5_000);
    const refusedA = await httpGetThroughProxy(proxy.a, `${dest.a.url}/bytes/10`, { signal: AbortSignal.timeout(5000) }).catch(() => null);
    expect(refusedA?.status === 200 && refusedA.bytes === 10).toBe(false);

    // C kept its stream through both cuts and makes new requests; the engine never restarted.
    const cBefore = streamC.received();
    await sleep(1_000);
    expect(streamC.received()).toBeGreaterThan(cBefore);
    expect((await httpGetThroughProxy(proxy.c, `${dest.c.url}/bytes/200000`)).bytes).toBe(200_000);
    expect(await enginePid(stateDir)).toBe(pid);

    // The agent is killed and started again while the control plane is away: the cuts hold (A and B
    // stay out of the adopted engine), C is served.
    await agent.kill();
    agent = spawnApp(AGENT, { ...agentEnv(stateDir), SVC_AGENT_USAGE_INTERVAL_SECONDS: '10' }, ['run']);
    await agent.waitForLog(/^agent started$/);
    expect(await enginePid(stateDir)).toBe(pid);
    for (const k of ['a', 'b'] as const) {
      const r = await httpGetThroughProxy(proxy[k], `${dest[k].url}/bytes/10`, { signal: AbortSignal.timeout(5000) }).catch(() => null);
      expect(r?.status === 200 && r.bytes === 10, `${k} still cut`).toBe(false);
    }
    expect((await httpGetThroughProxy(proxy.c, `${dest.c.url}/bytes/1000`)).bytes).toBe(1000);
    // C's destination ends its stream (a client leaving lets v2ray's client keep the far side open): C's bytes are final.
    await dest.c.close();
    await streamC.ended;

    // The control plane is back, and the ack of the first cutoff report is lost on the way, so the
    // agent sends it again on the next stream: the cutoffs (journaled while it was away) and the
    // usage arrive, each recorded once.
    gw.dropCutoffAcks = 1;
    gw.onCutoff = (c) => {
      if (c.reason === CutoffReason.CUTOFF_SLICE)
        gw.setDesired(desired(3n, { aNotAfter: BigInt(Date.now() + 3_600_000), bSlice: 2n, bBytes: 50_000_000n }));
    };
    await gw.start();
    await eventually(async () => (gw.cutoffReportsReceived.length >= 1 ? true : undefined), 'the first cutoff report', 90_000);
    await gw.stop();
    await gw.start();
    await eventually(async () => (gw.cutoffs.length >= 2 ? true : undefined), 'both cutoffs recorded', 90_000);
    expect(gw.cutoffReportsReceived[0]).toBe(gw.cutoffReportsReceived[1]);
    const bySub = new Map(gw.cutoffs.map((c) => [c.subscriptionId, c]));
    expect(gw.cutoffs).toHaveLength(2);
    expect(bySub.get(sub('a'))).toMatchObject({ reason: CutoffReason.CUTOFF_TIME, sliceId: 0n });
    expect(Number(bySub.get(sub('a'))?.atMs)).toBeGreaterThanOrEqual(Number(notAfter));
    const b = bySub.get(sub('b'));
    expect(b).toMatchObject({ reason: CutoffReason.CUTOFF_SLICE, sliceId: 1n });
    expect(b?.sliceUsedBytes).toBeGreaterThanOrEqual(SLICE);
    const totals = (k: 'a' | 'b' | 'c') => BigInt(dest[k].totals().uplink + dest[k].totals().downlink);
    // C's usage to the byte; A's and B's up to what was in flight when their connections were ended.
    await eventually(async () => (gw.usage.get(sub('c')) === totals('c') ? true : undefined), 'C’s usage recorded', 30_000).catch((err) => {
      throw new Error(
        `${(err as Error).message}: recorded ${[...gw.usage].join(' ')}; at the destinations ${totals('a')} ${totals('b')} ${totals('c')}`,
      );
    });
    for (const k of ['a', 'b'] as const) {
      const recorded = gw.usage.get(sub(k)) ?? 0n;
      expect(recorded).toBeLessThanOrEqual(totals(k));
      expect(totals(k) - recorded).toBeLessThan(300_000n);
    }

    // Re-granted (the CP's answer to the slice cut): A and B are served again, hot.
    await eventually(async () => (gw.applied.includes(3n) ? true : undefined), 'revision 3 applied', 30_000).catch((err) => {
      throw new Error(`${(err as Error).message}\nagent:\n${agent.lines.slice(-60).join('\n')}`);
    });
    await eventually(
      async () => ((await httpGetThroughProxy(proxy.b, `${dest.b.url}/bytes/1000`).catch(() => null))?.bytes === 1000 ? true : undefined),
      'B served again',
      15_000,
    );
    expect((await httpGetThroughProxy(proxy.a, `${dest.a.url}/bytes/1000`)).bytes).toBe(1000);
    expect(await enginePid(stateDir)).toBe(pid);
    // No report is recorded twice however often it came.
    expect(gw.cutoffs).toHaveLength(2);
    console.info(`cutoff reports received ${gw.cutoffReportsReceived.length} times for ${new Set(gw.cutoffReportsReceived).size} ids`);
  }, 240_000);
});
