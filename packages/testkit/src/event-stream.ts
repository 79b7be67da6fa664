/** A server-sent-events client for tests: real HTTP, events parsed as they arrive. */
export interface SseEvent {
  event: string;
  data: string;
}

export interface EventStream {
  status: number;
  headers: Headers;
  /** The body of a non-200 answer (a problem document). */
  text: string;
  events: SseEvent[];
  waitFor(predicate: (events: SseEvent[]) => boolean, timeoutMs?: number): Promise<void>;
  /** Settles when the server ends the stream (or close() aborts it). */
  done: Promise<void>;
  close(): Promise<void>;
}

export async function openEventStream(url: string, opts: { token?: string } = {}): Promise<EventStream> {
  const abort = new AbortController();
  const res = await fetch(url, {
    headers: { accept: 'text/event-stream', ...(opts.token ? { authorization: `Bearer ${opts.token}` } : {}) },
    signal: abort.signal,
  });
  const events: SseEvent[] = [];
  const waiters = new Set<() => void>();
  const notify = () => {
    for (const w of [...waiters]) w();
  };
  if (res.status !== 200 || !res.body) {
    return {
      status: res.status,
      headers: res.headers,
      text: await res.text(),
      events,
      waitFor: async () => {},
      done: Promise.resolve(),
      close: async () => {},
    };
  }
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  const reading = (async () => {
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += value;
        let cut = buffer.indexOf('\n\n');
        while (cut >= 0) {
          const block = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          let event = 'message';
          const data: string[] = [];
          for (const line of block.split('\n')) {
            if (line.startsWith('event:')) event = line.slice(6).trim();
            else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
          }
          if (data.length) events.push({ event, data: data.join('\n') });
          cut = buffer.indexOf('\n\n');
        }
        notify();
      }
    } catch {
      // aborted
    }
  })();
  return {
    status: res.status,
    headers: res.headers,
    text: '',
    events,
    done: reading,
    waitFor(predicate, timeoutMs = 5000) {
      if (predicate(events)) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const check = () => {
          if (!predicate(events)) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve();
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`SSE: condition not met within ${timeoutMs} ms; events: ${JSON.stringify(events).slice(0, 500)}`));
        }, timeoutMs);
        waiters.add(check);
      });
    },
    async close() {
      abort.abort();
      await reading;
    },
  };
}
