import { CreateNodeInput, createNode, type DomainContext, type NodeView, parseInput } from '@svc/domain';

let seq = 0;
/** A name no other fixture of this process has: tests share databases only with themselves, but names must still differ. */
export const uniqueName = (prefix: string): string => `${prefix}-${process.pid.toString(36)}-${(++seq).toString(36)}`;

/**
 * The fleet as tests need it, created through the domain's use cases (the same input schemas,
 * rules, revisions and audit as every surface), never by raw inserts. Each maker takes the
 * fields a test cares about and fills in the rest.
 */
export function fixtures(ctx: DomainContext) {
  return {
    /** An enabled node (offline: no agent). */
    node: (input: Partial<{ name: string; address: string }> = {}): Promise<NodeView> => {
      const name = input.name ?? uniqueName('node');
      return createNode(ctx, parseInput(CreateNodeInput, { name, address: input.address ?? `${name}.example.net` }));
    },
  };
}
export type Fixtures = ReturnType<typeof fixtures>;
