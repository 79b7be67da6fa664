import type { Db } from '@svc/db';
import { type DomainError, isDomainError, JOBS, type MailMessage, parseInput } from '@svc/domain';
import { createDomainTestbed, type DomainTestbed, type Fixtures, fixtures, until } from '@svc/testkit';
import { afterAll, beforeAll } from 'vitest';

/** What the rule tests read back (revisions, audit entries, the reasons of a refusal), whichever area they prove. */

/** A testbed or a use case's context: anything that reaches the test's database. */
type Reaches = { db: Db } | { deps: { db: Db } };
const dbOf = (from: Reaches): Db => ('deps' in from ? from.deps.db : from.db);

/** desired_revision of each node, by id. */
export async function revisionsOf(from: Reaches, ids: readonly string[]): Promise<Record<string, number>> {
  if (ids.length === 0) return {};
  const rows = await dbOf(from).selectFrom('nodes').select(['id', 'desired_revision']).where('id', 'in', ids).execute();
  return Object.fromEntries(rows.map((r) => [r.id, Number(r.desired_revision)]));
}

/** `before` with one more for each of `bumped`. */
export const plusOne = (before: Record<string, number>, bumped: readonly string[]): Record<string, number> => ({
  ...before,
  ...Object.fromEntries(bumped.map((id) => [id, (before[id] as number) + 1])),
});

/** Runs `change` and returns by how much each node's desired_revision moved. */
export async function bumpsOf(from: Reaches, nodes: readonly string[], change: () => Promise<unknown>): Promise<Record<string, number>> {
  const before = await revisionsOf(from, nodes);
  await change();
  const after = await revisionsOf(from, nodes);
  return Object.fromEntries(nodes.map((n) => [n, (after[n] ?? 0) - (before[n] ?? 0)]));
}

/** The audit entries about one entity, oldest first. */
export const auditOf = (from: Reaches, entityId: string) =>
  dbOf(from).selectFrom('audit_log').selectAll().where('entity_id', '=', entityId).orderBy('id').execute();

/** The domain error a call fails with; the test fails when it succeeds or fails otherwise. */
export async function refusal(call: Promise<unknown>): Promise<DomainError> {
  const outcome = await call.then(
    () => new Error('expected the call to be refused, and it succeeded'),
    (err: unknown) => err,
  );
  if (!isDomainError(outcome)) throw outcome;
  return outcome;
}

/** The reasons per field a schema gives for `input` ({} when it passes), as a problem's `errors`. */
export function inputErrors(schema: Parameters<typeof parseInput>[0], input: unknown): Record<string, string> {
  try {
    parseInput(schema, input);
    return {};
  } catch (err) {
    if (isDomainError(err) && err.type === 'validation') return err.errors ?? {};
    throw err;
  }
}

export interface FileTestbed {
  readonly bed: DomainTestbed;
  /** Fixtures acting as the test owner. */
  readonly f: Fixtures;
}

/**
 * The testbed of one test file: a database of its own, opened before the file's tests (and
 * before the hooks the file registers after this call) and closed after them.
 */
export function fileTestbed(): FileTestbed {
  let opened: { bed: DomainTestbed; f: Fixtures } | undefined;
  beforeAll(async () => {
    const bed = await createDomainTestbed();
    opened = { bed, f: fixtures(bed.ctx()) };
  });
  afterAll(() => opened?.bed.close());
  const get = () => {
    if (!opened) throw new Error('the testbed opens in beforeAll: use it inside hooks and tests');
    return opened;
  };
  return {
    get bed() {
      return get().bed;
    },
    get f() {
      return get().f;
    },
  };
}

export interface MailTestbed {
  readonly bed: DomainTestbed;
  /** Every `mail.send` job so far: what owners and customers would receive, before any transport. */
  readonly mails: MailMessage[];
  /** The latest mail of `category` to `email`, waiting for it. */
  mailTo(email: string, category: string): Promise<MailMessage>;
}

/** fileTestbed whose `mail.send` jobs are kept instead of sent (with `env` over the test defaults). */
export function mailTestbed(env: Record<string, string> = {}): MailTestbed {
  let bed: DomainTestbed | undefined;
  let stop: (() => Promise<void>) | undefined;
  const mails: MailMessage[] = [];
  beforeAll(async () => {
    bed = await createDomainTestbed({ env: { SVC_PUBLIC_BASE_URL: 'https://cp.example.com', ...env } });
    stop = await bed.deps.jobs.consume(JOBS.mailSend, async (m) => {
      mails.push(m);
    });
  });
  afterAll(async () => {
    await stop?.();
    await bed?.close();
  });
  return {
    get bed() {
      if (!bed) throw new Error('the testbed opens in beforeAll: use it inside hooks and tests');
      return bed;
    },
    mails,
    async mailTo(email, category) {
      const mine = () => mails.filter((m) => m.to === email && m.category === category);
      await until(`a ${category} mail to ${email}`, () => mine().length > 0);
      return mine().at(-1) as MailMessage;
    },
  };
}
