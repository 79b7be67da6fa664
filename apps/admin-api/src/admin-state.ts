import { type DomainContext, LogTailHub } from '@svc/domain';
import { EventStreamSlots } from './event-stream-slots.ts';

/**
 * What one admin surface holds between requests: its live log tails and the places of its
 * event streams. Made by createAdminApi and stopped with it; the hub is made at the first
 * request that needs it, from the bus that request's deps carry (mounting needs no runtime).
 */
export interface AdminState {
  logTails(ctx: Pick<DomainContext, 'bus'>): LogTailHub;
  eventStreams: EventStreamSlots;
  stop(): Promise<void>;
}

export function createAdminState(): AdminState {
  let hub: LogTailHub | undefined;
  return {
    eventStreams: new EventStreamSlots(),
    logTails: (ctx) => {
      hub ??= new LogTailHub(ctx.bus);
      return hub;
    },
    stop: async () => {
      await hub?.stop();
    },
  };
}
