import { expireDueSubscriptions, SYSTEM, withActor } from '@svc/domain';
import { type Gateway, nodeRow, startGateway } from './harness.ts';
import { triggerScenarios } from './trigger-scenarios.ts';

/** The trigger scenarios in all-in-one mode: admin API and gateway in this process (fake clock). */
let g: Gateway;
triggerScenarios(
  async () => {
    g = await startGateway();
    return {
      api: g.s.api,
      token: g.token,
      enrolledAgent: g.enrolledAgent,
      desiredRevision: async (id) => BigInt((await nodeRow(g, id)).desired_revision),
      async expire(subscriptionId) {
        const res = await g.s.api.patch(
          `/api/v1/subscriptions/${subscriptionId}`,
          { expires_at: new Date(g.s.clock.now().getTime() + 60_000).toISOString() },
          { token: await g.token() },
        );
        if (res.status !== 200) throw new Error(res.text);
        g.s.clock.advance(120_000);
        if ((await expireDueSubscriptions(withActor(g.s.deps, SYSTEM))) !== 1) throw new Error('nothing expired');
      },
    };
  },
  () => g.stop(),
);
