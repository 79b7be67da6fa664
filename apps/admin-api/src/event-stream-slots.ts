/** Open event streams allowed per admin surface, and per session (one per tab is what the panel opens). */
export const MAX_EVENT_STREAMS = 2000;
export const MAX_EVENT_STREAMS_PER_SESSION = 8;

/** The places for GET /events streams of one admin surface: take one per stream, release it when the stream ends. */
export class EventStreamSlots {
  private open = 0;
  private readonly perSession = new Map<string, number>();

  constructor(
    private readonly max = MAX_EVENT_STREAMS,
    private readonly maxPerSession = MAX_EVENT_STREAMS_PER_SESSION,
  ) {}

  /** A place for a stream of session `sid`, and the function that gives it back (once); null when full. */
  take(sid: string): (() => void) | null {
    const mine = this.perSession.get(sid) ?? 0;
    if (this.open >= this.max || mine >= this.maxPerSession) return null;
    this.open += 1;
    this.perSession.set(sid, mine + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.open -= 1;
      const n = (this.perSession.get(sid) ?? 1) - 1;
      if (n <= 0) this.perSession.delete(sid);
      else this.perSession.set(sid, n);
    };
  }

  get size(): number {
    return this.open;
  }
}
