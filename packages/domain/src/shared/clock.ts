/** Time comes from here, never from Date.now() in domain code, so tests can move it. */
export interface Clock {
  now(): Date;
}
export const systemClock: Clock = { now: () => new Date() };
