import { session } from '../api.ts';

export interface SseEvent {
  event: string;
  data: string;
  id?: string;
}

/**
 * Reads a server-sent event stream with fetch (EventSource cannot send the Authorization
 * header). Calls `onEvent` per event until `signal` aborts; resolves when the stream ends.
 */
export async function readEventStream(url: string, onEvent: (e: SseEvent) => void, signal: AbortSignal): Promise<void> {
  const token = await session.token();
  const res = await fetch(url, {
    headers: { accept: 'text/event-stream', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    signal,
  });
  if (!res.ok || !res.body) throw new Error(`event stream: HTTP ${res.status}`);
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value;
    let end = buffer.search(/\r?\n\r?\n/);
    while (end !== -1) {
      const block = buffer.slice(0, end);
      const separator = buffer.slice(end).match(/^\r?\n\r?\n/)?.[0].length ?? 2;
      buffer = buffer.slice(end + separator);
      const e: SseEvent = { event: 'message', data: '' };
      const data: string[] = [];
      for (const line of block.split(/\r?\n/)) {
        if (line.startsWith(':')) continue;
        const colon = line.indexOf(':');
        const field = colon === -1 ? line : line.slice(0, colon);
        const val = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '');
        if (field === 'event') e.event = val;
        else if (field === 'data') data.push(val);
        else if (field === 'id') e.id = val;
      }
      e.data = data.join('\n');
      if (data.length > 0 || e.event !== 'message') onEvent(e);
      end = buffer.search(/\r?\n\r?\n/);
    }
  }
}
