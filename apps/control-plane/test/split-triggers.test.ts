import { expireDueSubscriptions, SYSTEM, withActor } from '@svc/domain';
import { describe } from 'vitest';
import { type Split, splitAvailable, startSplit } from './split-harness.ts';
import { triggerScenarios } from './trigger-scenarios.ts';

/**
 * The trigger scenarios in split mode (issue 5 "Checked by"): the admin API and two gateway
 * replicas as processes over PostgreSQL + Redis; agents spread over both replicas, so every
 * push crosses the bus. The expiry sweep runs from the test process, standing in for the worker.
 */
let split: Split;
describe.skipIf(!splitAvailable())('triggers in split mode', () => {
  triggerScenarios(
    async () => {
      split = await startSplit(2);
      const db = split.worker.deps.db;
      return {
        api: split.api,
        token: split.token,
        enrolledAgent: () => split.enrolledAgent(),
        desiredRevision: async (id) =>
          BigInt((await db.selectFrom('nodes').select('desired_revision').where('id', '=', id).executeTakeFirstOrThrow()).desired_revision),
        async expire(subscriptionId) {
          // Time passes (as stored data): the expiry is in the past; the sweep writes it down and announces it.
          await db
            .updateTable('subscriptions')
            .set({ expires_at: new Date(Date.now() - 1000) })
            .where('id', '=', subscriptionId)
            .execute();
          if ((await expireDueSubscriptions(withActor(split.worker.deps, SYSTEM))) !== 1) throw new Error('nothing expired');
        },
      };
    },
    () => split.stop(),
  );
});
