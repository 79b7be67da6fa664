import type { Clock } from '@svc/domain';

export interface FakeClock extends Clock {
  advance(ms: number): void;
  set(at: Date): void;
}

/** A clock tests move by hand: token expiry, rate-limit windows, TTLs. */
export function createFakeClock(start: Date = new Date()): FakeClock {
  let t = start.getTime();
  return {
    now: () => new Date(t),
    advance: (ms) => {
      t += ms;
    },
    set: (at) => {
      t = at.getTime();
    },
  };
}
