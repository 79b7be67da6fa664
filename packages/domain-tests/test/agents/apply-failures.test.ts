import { bumpNodeRevisions, dispatchEvents, getNode, recordAppliedRevisions, recordApplyFailure, unitOfWork } from '@svc/domain';
import { fixtures } from '@svc/testkit';
import { describe, expect, it } from 'vitest';
import { mailTestbed } from '../support.ts';

/**
 * Issue 28.2: a failed apply is loud. The node keeps the failure (which revision, since when,
 * the agent's words) until a revision at or past it applies; node.apply_failed is raised once
 * per failed revision (the agent repeats a failure on every reconnect), node.apply_recovered
 * when it clears; owners are mailed about a failure by default (notify.email_events).
 */

const t = mailTestbed();
const { mails } = t;

const V2RAY_WORDS = [
  'V2Ray 4.34.0 (user) 20230518-074445 (go1.19.8 linux/amd64)',
  'A unified platform for anti-censorship.',
  '2026/11/28 16:45:11 [Info] v2ray.com/core/main/jsonem: Reading config: /var/lib/svc-agent/config.next.json',
  'main: failed to read config files: [config.next.json] > v2ray.com/core/infra/conf: Config: unknown transport protocol: grpc',
].join('\n');

/** A node at desired revision `desired` (bumped through the unit of work, as a change does). */
async function nodeAt(desired: number) {
  const node = await fixtures(t.bed.ctx()).node();
  for (let r = 1; r < desired; r++) await unitOfWork(t.bed.deps, (uow) => bumpNodeRevisions(uow, [node.id]));
  expect((await getNode(t.bed.ctx(), node.id)).desired_revision).toBe(desired);
  return node;
}

const eventsOf = async (type: string, nodeId: string) =>
  (await t.bed.deps.db.selectFrom('events').selectAll().where('type', '=', type).orderBy('id').execute())
    .map((e) => (typeof e.payload === 'string' ? JSON.parse(e.payload) : e.payload) as Record<string, unknown>)
    .filter((p) => p.node_id === nodeId);

describe('a failed apply is kept on the node and raised once per revision', () => {
  it('the node view shows the failed revision, since when, and the agent’s words; node.apply_failed is raised once for it', async () => {
    const node = await nodeAt(3);
    await recordAppliedRevisions(t.bed.deps, [{ node_id: node.id, revision: 2 }]);
    const since = t.bed.clock.now();
    const first = await recordApplyFailure(t.bed.deps, node.id, { revision: 3, error: V2RAY_WORDS });
    expect(first).toMatchObject({ name: node.name, revision: 3, applied_revision: 2, first: true, failing_since: since });
    t.bed.clock.advance(60_000);
    // The agent sends the same failure again after a reconnect: stored, not raised again.
    expect(await recordApplyFailure(t.bed.deps, node.id, { revision: 3, error: V2RAY_WORDS })).toMatchObject({
      first: false,
      failing_since: since,
    });

    expect(await getNode(t.bed.ctx(), node.id)).toMatchObject({
      applied_revision: 2,
      apply_failed_revision: 3,
      apply_failing_since: since.toISOString(),
      last_apply_error: `revision 3: ${V2RAY_WORDS}`,
    });
    expect(await eventsOf('node.apply_failed', node.id)).toEqual([
      { node_id: node.id, name: node.name, revision: 3, applied_revision: 2, error: V2RAY_WORDS, failing_since: since.toISOString() },
    ]);
  });

  it('a later revision that fails too is raised again, the node failing since the first', async () => {
    const node = await nodeAt(4);
    const since = t.bed.clock.now();
    await recordApplyFailure(t.bed.deps, node.id, { revision: 3, error: 'unknown transport protocol: grpc' });
    t.bed.clock.advance(60_000);
    await recordApplyFailure(t.bed.deps, node.id, { revision: 4, error: 'unknown cipher method: 2022-blake3-aes-128-gcm' });
    const raised = await eventsOf('node.apply_failed', node.id);
    expect(raised.map((e) => [e.revision, e.failing_since])).toEqual([
      [3, since.toISOString()],
      [4, since.toISOString()],
    ]);
    expect(await getNode(t.bed.ctx(), node.id)).toMatchObject({
      apply_failed_revision: 4,
      last_apply_error: 'revision 4: unknown cipher method: 2022-blake3-aes-128-gcm',
    });
  });

  it('a revision above the desired one is taken as the desired one; an empty error is said to be empty', async () => {
    const node = await nodeAt(2);
    expect(await recordApplyFailure(t.bed.deps, node.id, { revision: 2 ** 62, error: '  ' })).toMatchObject({
      revision: 2,
      error: 'failed without an error text',
    });
    expect(await recordApplyFailure(t.bed.deps, 'nod_gone', { revision: 1, error: 'x' })).toBeNull();
  });

  it('the agent’s words are kept from their end, where the engine says what it refused', async () => {
    const node = await nodeAt(1);
    const banner = 'x'.repeat(10_000);
    const failed = await recordApplyFailure(t.bed.deps, node.id, { revision: 1, error: `${banner}\nunknown protocol: quic` });
    expect(failed?.error).toHaveLength(4000);
    expect(failed?.error.endsWith('\nunknown protocol: quic')).toBe(true);
    expect(failed?.error.startsWith('…')).toBe(true);
  });
});

describe('a success at or past the failed revision clears the failure and raises node.apply_recovered', () => {
  it('an older revision applied leaves the failure standing; the failed one or a later one clears it', async () => {
    const node = await nodeAt(5);
    const since = t.bed.clock.now();
    await recordApplyFailure(t.bed.deps, node.id, { revision: 4, error: 'refused' });
    expect(await recordAppliedRevisions(t.bed.deps, [{ node_id: node.id, revision: 3 }])).toEqual([]);
    expect(await getNode(t.bed.ctx(), node.id)).toMatchObject({
      applied_revision: 3,
      apply_failed_revision: 4,
      last_apply_error: 'revision 4: refused',
    });

    const recovered = await recordAppliedRevisions(t.bed.deps, [{ node_id: node.id, revision: 5 }]);
    expect(recovered).toEqual([{ node_id: node.id, name: node.name, revision: 5, failed_revision: 4, failing_since: since }]);
    expect(await getNode(t.bed.ctx(), node.id)).toMatchObject({
      applied_revision: 5,
      apply_failed_revision: null,
      apply_failing_since: null,
      last_apply_error: null,
    });
    expect(await eventsOf('node.apply_recovered', node.id)).toEqual([
      { node_id: node.id, name: node.name, revision: 5, failed_revision: 4, failing_since: since.toISOString() },
    ]);
    // Nothing to recover from: a success raises nothing.
    expect(await recordAppliedRevisions(t.bed.deps, [{ node_id: node.id, revision: 5 }])).toEqual([]);
    expect(await eventsOf('node.apply_recovered', node.id)).toHaveLength(1);
  });

  it('a revision failing again after a recovery is raised again', async () => {
    const node = await nodeAt(2);
    await recordApplyFailure(t.bed.deps, node.id, { revision: 1, error: 'refused' });
    await recordAppliedRevisions(t.bed.deps, [{ node_id: node.id, revision: 1 }]);
    await recordApplyFailure(t.bed.deps, node.id, { revision: 2, error: 'refused' });
    expect((await eventsOf('node.apply_failed', node.id)).map((e) => e.revision)).toEqual([1, 2]);
  });
});

describe('owners are mailed about a failed apply by default', () => {
  it('node.apply_failed is in notify.email_events by default; the mail says what failed, what still runs, the engine’s words and where to look', async () => {
    expect(t.bed.deps.config.notify.email_events).toContain('node.apply_failed');
    expect(t.bed.deps.config.notify.email_events).not.toContain('node.apply_recovered');
    const owner = await fixtures(t.bed.ctx()).admin({ role: 'owner' });
    const node = await nodeAt(2);
    await recordAppliedRevisions(t.bed.deps, [{ node_id: node.id, revision: 1 }]);
    await recordApplyFailure(t.bed.deps, node.id, { revision: 2, error: V2RAY_WORDS });
    await dispatchEvents(t.bed.deps);
    const mail = await (async () => {
      for (let i = 0; i < 200; i++) {
        const found = mails.find((m) => m.to === owner.email && m.category === 'event:node.apply_failed' && m.text.includes(node.id));
        if (found) return found;
        await new Promise((r) => setTimeout(r, 10));
      }
      throw new Error('no mail to the owner');
    })();
    expect(mail.subject).toBe(`Node ${node.name} failed to apply revision 2`);
    expect(mail.text).toContain('It keeps serving\nrevision 1');
    expect(mail.text).toContain(
      '  main: failed to read config files: [config.next.json] > v2ray.com/core/infra/conf: Config: unknown transport protocol: grpc',
    );
    expect(mail.text).toContain(`GET https://cp.example.com/api/v1/nodes/${node.id}`);
  });
});
