// The entitlement pass of `pnpm bench:enforcement` (apps/agent/src/entitlements): the agent's
// look at its bounded users every second, CPU per pass at BENCH_USERS users who each have a
// not-after and a traffic slice. The engine's counters (`peek`, one QueryStats call in the
// agent) are handed in as a map, so the figures are the agent's own work on top of that read.
// - full pass: what a pass costs after new limits arrive (every bounded user looked at);
// - steady pass, 1% of the users moved bytes: what the agent pays each second normally;
// - steady pass, every user moved bytes: the worst second;
// - baseline in the same run: the rule itself (cutReason) over every user, once, without the
//   book or the bookkeeping, i.e. what a pass that looked at everybody each time would cost at
//   the least; the incremental pass is meant to stay well below it.
import { NodeConfig, type NodeConfig as NodeConfigT, userEmail } from '@svc/proto';
import { pino } from 'pino';
import { EntitlementEnforcer } from '../../apps/agent/src/entitlements/entitlement-enforcer.ts';
import { cutReason } from '../../apps/agent/src/entitlements/entitlement-rule.ts';
import { tempDir } from '../common/run.ts';

const GIB = 2n ** 30n;

export interface EntitlementFigures {
  fullMs: number;
  steadyOnePctMs: number;
  steadyAllMs: number;
  ruleAloneMs: number;
  cut: number;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;
const cpuMs = (c0: NodeJS.CpuUsage) => {
  const c = process.cpuUsage(c0);
  return (c.user + c.system) / 1000;
};

export async function entitlementPass(users: number, passes: number): Promise<EntitlementFigures> {
  const dir = tempDir('svc-bench-entitlements-');
  let counted: Map<string, bigint> = new Map();
  const enforcer = await EntitlementEnforcer.open({
    stateDir: dir,
    peek: async () => counted,
    reapply: async () => {},
    send: () => true,
    connected: () => false,
    log: pino({ level: 'silent' }),
    resendAfterMs: 60_000,
  });
  const ids = Array.from({ length: users }, (_, u) => `sub_${u}`);
  const notAfter = BigInt(Date.now() + 86_400_000);
  const config: NodeConfigT = NodeConfig.fromPartial({
    xray: { inbounds: [{ tag: 'vless-tcp', users: ids.map((id) => ({ email: userEmail(id) })) }] },
    userLimits: ids.map((id, u) => ({ subscriptionId: id, notAfterMs: notAfter, sliceId: BigInt(u + 1), sliceBytes: GIB })),
  });
  await enforcer.withhold(config);

  // Full pass (after new limits).
  const full: number[] = [];
  for (let p = 0; p < passes; p++) {
    await enforcer.withhold(config);
    const c0 = process.cpuUsage();
    await enforcer.pass();
    full.push(cpuMs(c0));
  }
  // Steady passes: 1% of the users, then all, counted a few more bytes since the last collection.
  const steady = async (share: number): Promise<number> => {
    const xs: number[] = [];
    let bytes = 1000n;
    for (let p = 0; p < passes; p++) {
      bytes += 1000n;
      counted = new Map();
      const step = Math.max(1, Math.round(1 / share));
      for (let u = p % step; u < users; u += step) counted.set(ids[u] as string, bytes);
      const c0 = process.cpuUsage();
      await enforcer.pass();
      xs.push(cpuMs(c0));
    }
    return median(xs);
  };
  await enforcer.pass();
  const steadyOnePctMs = await steady(0.01);
  const steadyAllMs = await steady(1);

  // Baseline: the rule over every user, once per pass, nothing else.
  const rule: number[] = [];
  const limits = config.userLimits.map((l) => ({ notAfterMs: l.notAfterMs, sliceId: l.sliceId, sliceBytes: l.sliceBytes }));
  let cutByRule = 0;
  for (let p = 0; p < passes; p++) {
    const now = Date.now();
    const c0 = process.cpuUsage();
    for (const [u, l] of limits.entries()) if (cutReason(l, counted.get(ids[u] as string) ?? 0n, now) !== null) cutByRule++;
    rule.push(cpuMs(c0));
  }
  return {
    fullMs: median(full),
    steadyOnePctMs,
    steadyAllMs,
    ruleAloneMs: median(rule),
    cut: enforcer.withheld().size + cutByRule,
  };
}
