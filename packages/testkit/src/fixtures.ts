import type { DomainContext } from '@svc/domain';
import { customerFixtures } from './fixtures/customers.ts';
import { fleetFixtures } from './fixtures/fleet.ts';
import { operatorFixtures } from './fixtures/operators.ts';

export { uniqueName } from './fixtures/names.ts';

/**
 * What tests need, created through the domain's use cases (the same input schemas, rules,
 * revisions and audit as every surface), never by raw inserts. Each maker takes the fields a
 * test cares about and fills in the rest.
 */
export function fixtures(ctx: DomainContext) {
  return { ...fleetFixtures(ctx), ...customerFixtures(ctx), ...operatorFixtures(ctx) };
}
export type Fixtures = ReturnType<typeof fixtures>;
