import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { mountAdminApi } from '@svc/admin-api';
import { SYSTEM, withActor } from '@svc/domain';
import {
  type AppProcess,
  cloneSubscriptions,
  fixtures,
  freePort,
  login,
  OWNER,
  setupOwner,
  spawnApp,
  startTestServer,
  type TestServer,
  uniqueName,
} from '@svc/testkit';
import { afterAll, describe, expect, it } from 'vitest';

// Issue 35.3, Checked by: a bulk extend of 10,000 subscriptions, asked over HTTP, run by the
// worker as its own process over PostgreSQL and Redis (BullMQ), killed (SIGKILL) mid-way; a
// second worker takes the job up (BullMQ hands a dead worker's job on once its lock lapses)
// and finishes it: each subscription extended exactly once, one revision per affected node.
// Needs both (split mode); skipped on the embedded database.
const split = Boolean(process.env.DATABASE_URL && process.env.REDIS_URL);
const DAY = 86_400_000;
const cleanups: Array<() => Promise<unknown> | unknown> = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

describe.skipIf(!split)('a bulk job survives a worker killed mid-way (split mode: PostgreSQL + Redis)', () => {
  it('10,000 subscriptions extended exactly once, progress seen, one revision per node for the whole job', async () => {
    const key = randomBytes(32).toString('base64');
    const prefix = `svc-bulk-${randomBytes(4).toString('hex')}:`;
    const s: TestServer = await startTestServer({ installationKey: key, redisKeyPrefix: prefix, mount: mountAdminApi });
    cleanups.push(() => s.stop());
    await setupOwner(s);
    const token = (await login(s, OWNER.email, OWNER.password)).access_token;
    const f = fixtures(withActor(s.deps, SYSTEM));
    const [a, b] = [await f.servingNode(), await f.servingNode()];
    const note = uniqueName('bulk-kill');
    const client = await f.client();
    const expires = new Date(Date.now() + DAY);
    const templates = [
      await f.subscription({ client_id: client.id, access_group_ids: [a.group.id], expires_at: expires, note }),
      await f.subscription({ client_id: client.id, access_group_ids: [b.group.id], expires_at: expires, note }),
    ];
    const ids = [
      ...templates.map((t) => t.id),
      ...(await cloneSubscriptions(s.deps.db, templates[0]?.id as string, 4_999)),
      ...(await cloneSubscriptions(s.deps.db, templates[1]?.id as string, 4_999)),
    ];
    // A few of each node's expired already: their extension brings them back on the nodes.
    const expired = templates.map((t) => t.id);
    await s.deps.db
      .updateTable('subscriptions')
      .set({ status: 'expired', expires_at: new Date(Date.now() - DAY) })
      .where('id', 'in', expired)
      .execute();
    const revisions = async () =>
      Object.fromEntries(
        (await s.deps.db.selectFrom('nodes').select(['id', 'desired_revision']).where('id', 'in', [a.node.id, b.node.id]).execute()).map(
          (r) => [r.id, Number(r.desired_revision)],
        ),
      );
    const before = await revisions();

    const asked = await s.api.post(
      '/api/v1/subscriptions/bulk',
      { filter: { q: note }, action: { type: 'extend_expiry', days: 30 } },
      { token },
    );
    expect(asked.status, asked.text).toBe(202);
    expect(asked.headers.get('location')).toBe(`/api/v1/bulk-jobs/${asked.body.id}`);
    expect(asked.body).toMatchObject({ status: 'queued', total: 10_000 });
    const jobOf = async () => (await s.api.get(`/api/v1/bulk-jobs/${asked.body.id}`, { token })).body;

    const workerEnv = (): Record<string, string> => {
      const dataDir = mkdtempSync(join(tmpdir(), 'svc-bulk-worker-'));
      cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
      return {
        SVC_DATA_DIR: dataDir,
        DATABASE_URL: s.database.url as string,
        REDIS_URL: process.env.REDIS_URL as string,
        SVC_REDIS_KEY_PREFIX: prefix,
        SVC_INSTALLATION_KEY: key,
        SVC_HTTP_HOST: '127.0.0.1',
        SVC_HTTP_PORT: '0',
      };
    };
    const first: AppProcess = spawnApp('apps/worker/src/main.ts', { ...workerEnv(), SVC_HTTP_PORT: String(await freePort()) });
    cleanups.push(() => first.kill());
    // Killed once it is part-way: some chunks committed, more to do.
    const seen: number[] = [];
    for (;;) {
      const job = await jobOf();
      if (job.done > 0) seen.push(job.done);
      if (job.done >= 1_000) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    first.child.kill('SIGKILL');
    await first.exited;
    const atKill = await jobOf();
    expect(atKill.status).toBe('running');
    expect(atKill.done).toBeLessThan(10_000);
    expect(await revisions()).toEqual(before);

    const second: AppProcess = spawnApp('apps/worker/src/main.ts', { ...workerEnv(), SVC_HTTP_PORT: String(await freePort()) });
    cleanups.push(() => second.kill());
    let job = await jobOf();
    const until = Date.now() + 150_000;
    while (job.status !== 'done' && Date.now() < until) {
      if (job.done > (seen.at(-1) ?? 0)) seen.push(job.done);
      await new Promise((r) => setTimeout(r, 200));
      job = await jobOf();
    }
    expect(job).toMatchObject({ status: 'done', total: 10_000, done: 10_000, skipped: 0 });
    // Progress rose chunk by chunk, across both workers.
    expect(seen.length).toBeGreaterThan(2);
    expect([...seen].sort((x, y) => x - y)).toEqual(seen);

    const rows = await s.deps.db.selectFrom('subscriptions').select(['id', 'expires_at', 'status']).where('id', 'in', ids).execute();
    const wanted = (id: string) => (expired.includes(id) ? 30 * DAY : 31 * DAY);
    const wrong = rows.filter((r) => Math.abs((r.expires_at?.getTime() ?? 0) - (expires.getTime() - DAY + wanted(r.id))) > 120_000);
    expect(wrong).toEqual([]);
    // Exactly once: one audit entry per subscription, however many workers ran the job.
    const audits = await s.deps.db
      .selectFrom('audit_log')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('action', '=', 'subscription.bulk_extend_expiry')
      .executeTakeFirstOrThrow();
    expect(Number(audits.n)).toBe(10_000);
    expect(await revisions()).toEqual({ [a.node.id]: (before[a.node.id] as number) + 1, [b.node.id]: (before[b.node.id] as number) + 1 });
  }, 240_000);
});
