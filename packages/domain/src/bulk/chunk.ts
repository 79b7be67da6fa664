import type { DomainEvent } from '../events/catalogue.ts';
import type { DomainDeps } from '../shared/context.ts';

/** What applying a chunk needs beside its unit of work. */
export type ChunkDeps = Pick<DomainDeps, 'secrets'>;

/** What one chunk did: subjects it could not apply, nodes its changes reach (bumped at the job's end), events to record. */
export interface ChunkResult {
  skipped: string[];
  nodes: string[];
  events: DomainEvent[];
}
