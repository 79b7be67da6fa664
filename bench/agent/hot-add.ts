// `pnpm bench:agent-hot-add`: what one user change costs the node agent, and who it drops, with the
// real engine (v2ray 4.34 here) running one inbound of 10,000 users (BENCH_USERS; VLESS TCP, or
// BENCH_PROTOCOL=vmess|trojan) applied by the real Applier in a temporary state directory:
// - BENCH_ADDS single-user adds through the engine API alone (`createEngineApi(...).addUser`), and
//   the removal of the same users (`removeUser`): p50 / p99 / max;
// - BENCH_APPLIES (200; ~0.3 s each here) single-user changes through the Applier's whole hot
//   path (planChange over the inbound, addUser, the configuration file rendered and rewritten,
//   the revision recorded), one desired state each: p50 / p99 / max, and planChange alone on
//   every tenth of them;
// - baseline in the same run: the same one-user change applied by a restart (what panels that
//   restart the engine on every user change pay): an Applier with no applied state (render, write,
//   `-test`, stop, start until the API answers), BENCH_RESTARTS times.
// Meanwhile one user keeps a connection open through the node (a v2ray client, tunnel.ts): whether
// it survives the hot changes and the restart is part of the result.
// Appends to bench/BENCHMARKS.md.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { type DesiredState, type InboundUser, NodeConfig } from '@svc/proto';
import type { Applier } from '../../apps/agent/src/apply/applier.ts';
import { planChange } from '../../apps/agent/src/apply/change-plan.ts';
import { freeLoopbackPort } from '../../apps/agent/src/engine/engine-cli.ts';
import { env, loadNow, log, machine, main, n, pct, publish, quietMachine, revision } from '../common/run.ts';
import { agentRig, benchEngine, ms } from './agent-rig.ts';
import { desired, nodeConfig, tagOf, type UserProtocol, userOf, withUsers } from './node-config.ts';
import { openTunnel } from './tunnel.ts';

const USERS = env('BENCH_USERS', 10_000);
const ADDS = env('BENCH_ADDS', 500);
const APPLIES = env('BENCH_APPLIES', 200);
const RESTARTS = env('BENCH_RESTARTS', 5);
const PROTOCOL = (process.env.BENCH_PROTOCOL ?? 'vless') as UserProtocol;
const run = promisify(execFile);

const spread = (xs: number[]) => `${ms(pct(xs, 50))} / ${ms(pct(xs, 99))} / ${ms(Math.max(...xs))}`;

await main(async () => {
  const settings = benchEngine();
  const version = (await run(settings.bin, settings.flavour === 'xray' ? ['version'] : ['-version'])).stdout.split('\n')[0] ?? '';
  const before = await quietMachine();
  const tag = tagOf(PROTOCOL);
  const config = nodeConfig({ protocols: [PROTOCOL], ports: [await freeLoopbackPort()], users: USERS });
  const inbound = config.xray?.inbounds[0];
  if (!inbound) throw new Error('no inbound');
  const rig = await agentRig(settings);
  let rev = 1;
  const apply = async (applier: Applier, state: DesiredState, expected: string) => {
    const outcome = await applier.apply(state);
    if (!outcome.success || outcome.how !== expected)
      throw new Error(`revision ${state.revision}: ${outcome.how} (expected ${expected}) ${outcome.error}`);
  };
  log(`the engine with one ${PROTOCOL} inbound of ${n(USERS)} users`);
  await apply(rig.applier, desired(rev++, config), 'restart');
  const pid = rig.engine.record?.pid;
  const tunnel = await openTunnel(inbound, userOf(PROTOCOL, 0));

  log(`${ADDS} adds and removals through the engine API`);
  const apiAdd: number[] = [];
  const apiRemove: number[] = [];
  const outsiders = Array.from({ length: ADDS }, (_, i) => userOf(PROTOCOL, 1_000_000 + i));
  for (const u of outsiders) {
    const t = performance.now();
    await rig.api.addUser(tag, u);
    apiAdd.push(performance.now() - t);
  }
  for (const u of outsiders) {
    const t = performance.now();
    await rig.api.removeUser(tag, u.email);
    apiRemove.push(performance.now() - t);
  }
  await tunnel.roundTrip();

  log(`${APPLIES} one-user changes through the Applier's hot path`);
  const hot: number[] = [];
  const plan: number[] = [];
  let users: InboundUser[] = inbound.users;
  let running = config;
  for (let i = 0; i < APPLIES; i++) {
    users = [...users, userOf(PROTOCOL, USERS + i)];
    const next = withUsers(config, tag, users);
    if (i % 10 === 0) {
      const t = performance.now();
      planChange(running, next);
      plan.push(performance.now() - t);
    }
    const t = performance.now();
    await apply(rig.applier, desired(rev++, next), 'hot');
    hot.push(performance.now() - t);
    running = next;
  }
  await tunnel.roundTrip();
  const keptEngine = rig.engine.record?.pid === pid;
  const keptAfterHot = !tunnel.closed;

  log(`${RESTARTS} restarts applying the same one-user change`);
  const restart: number[] = [];
  const swap: number[] = [];
  for (let i = 0; i < RESTARTS; i++) {
    // An Applier with no applied state restarts for any change: the path without HandlerService.
    const restarter = rig.newApplier(null);
    const next = withUsers(running, tag, [...users, userOf(PROTOCOL, USERS + APPLIES + i)]);
    const [starts, stops] = [rig.engine.starts.length, rig.engine.stops.length];
    const t = performance.now();
    await apply(restarter, desired(rev++, next), 'restart');
    restart.push(performance.now() - t);
    swap.push([...rig.engine.starts.slice(starts), ...rig.engine.stops.slice(stops)].reduce((a, b) => a + b, 0));
  }
  const droppedByRestart = await tunnel.closedWithin(5_000);
  await rig.close();

  const bytes = NodeConfig.encode(config).finish().length;
  publish([
    `### ${new Date().toISOString().slice(0, 10)} — agent hot add, one ${PROTOCOL.toUpperCase()} TCP inbound of ${n(USERS)} users`,
    '',
    `Machine: ${machine()}. Engine: ${settings.bin} (${version}). Commit ${revision()}. Load average (1/5/15 min) before: ${before}; after: ${loadNow()}. Temporary state directory on the machine's disk; NodeConfig ${(bytes / 2 ** 10).toFixed(0)} KiB. One user change per call or desired state, one after the other.`,
    '',
    '| path | changes | ms p50 / p99 / max |',
    '|---|---|---|',
    `| engine API alone: addUser (HandlerService AlterInbound) | ${ADDS} | ${spread(apiAdd)} |`,
    `| engine API alone: removeUser of the same users | ${ADDS} | ${spread(apiRemove)} |`,
    `| Applier hot path: one user added (planChange + addUser + config file rewritten + revision recorded) | ${APPLIES} | ${spread(hot)} |`,
    `| of which planChange over the inbound, timed alone on every tenth change | ${plan.length} | ${spread(plan)} |`,
    `| baseline: the same change applied by a restart (render, write, -test, stop, start until the API answers) | ${RESTARTS} | ${spread(restart)} |`,
    `| of the restart: engine stop + start until the API answers (the least a restart-on-change costs) | ${RESTARTS} | ${spread(swap)} |`,
    '',
    `An open connection of user 0 through the node: ${keptAfterHot ? 'kept' : 'DROPPED'} through the ${ADDS} API adds, ${ADDS} API removals and ${APPLIES} hot applies (engine process ${keptEngine ? 'unchanged' : 'CHANGED'}); ${droppedByRestart ? 'dropped by the restart' : 'still open after the restarts'}.`,
    '',
  ]);
});
