import { type DomainError, isDomainError, parseInput } from '@svc/domain';
import { createDomainTestbed, type DomainTestbed, type Fixtures, fixtures } from '@svc/testkit';
import { afterAll, beforeAll } from 'vitest';

/** What the fleet's rule tests read back: revisions, audit entries, the reasons of a refusal. */

/** desired_revision of each node, by id. */
export async function revisionsOf(bed: DomainTestbed, ids: readonly string[]): Promise<Record<string, number>> {
  if (ids.length === 0) return {};
  const rows = await bed.deps.db.selectFrom('nodes').select(['id', 'desired_revision']).where('id', 'in', ids).execute();
  return Object.fromEntries(rows.map((r) => [r.id, Number(r.desired_revision)]));
}

/** `before` with one more for each of `bumped`. */
export const plusOne = (before: Record<string, number>, bumped: readonly string[]): Record<string, number> => ({
  ...before,
  ...Object.fromEntries(bumped.map((id) => [id, (before[id] as number) + 1])),
});

/** The audit entries about one entity, oldest first. */
export const auditOf = (bed: DomainTestbed, entityId: string) =>
  bed.deps.db.selectFrom('audit_log').selectAll().where('entity_id', '=', entityId).orderBy('id').execute();

/** The domain error a call fails with; the test fails when it succeeds or fails otherwise. */
export async function refusal(call: Promise<unknown>): Promise<DomainError> {
  const outcome = await call.then(
    () => new Error('expected the call to be refused, and it succeeded'),
    (err: unknown) => err,
  );
  if (!isDomainError(outcome)) throw outcome;
  return outcome;
}

/** The reasons per field a schema gives for `input` ({} when it passes). */
export function inputErrors(schema: Parameters<typeof parseInput>[0], input: unknown): Record<string, string> {
  try {
    parseInput(schema, input);
    return {};
  } catch (err) {
    if (isDomainError(err) && err.type === 'validation') return err.errors ?? {};
    throw err;
  }
}

export interface FleetTestbed {
  readonly bed: DomainTestbed;
  /** Fixtures acting as the test owner. */
  readonly f: Fixtures;
}

/**
 * The testbed of one test file: a database of its own, opened before the file's tests (and
 * before the hooks the file registers after this call) and closed after them.
 */
export function fleetTestbed(): FleetTestbed {
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
