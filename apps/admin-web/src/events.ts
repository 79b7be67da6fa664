import { useSyncExternalStore } from 'react';
import { readEventStream } from './components/sse.ts';
import { API_BASE } from './paths.ts';
import { queryClient } from './query.ts';

/**
 * The panel's one live stream (GET /api/v1/events; a browser allows 6 connections per origin,
 * so one per tab, not per screen), written into the query cache: what changed is read again by
 * the screens showing it. While it is connected nothing polls; when it drops, screens fall back
 * to polling and it reconnects with backoff (everything is read again after a gap). It closes
 * while the tab is hidden and reopens when the tab is shown.
 */

// Audit entity types (what the server names in `changed`) → the query keys showing them.
const QUERIES: Record<string, string[]> = {
  node: ['nodes', 'inbounds', 'stats'],
  inbound_profile: ['inbound-profiles'],
  inbound: ['inbounds', 'access-groups'],
  access_group: ['access-groups'],
  chain: ['chains', 'inbounds'],
  certificate: ['certificates', 'stats'],
  dns_provider: ['dns-providers'],
  acme_account: ['acme-accounts'],
  client: ['clients'],
  subscription: ['subscriptions', 'stats'],
  plan: ['plans'],
  payment_provider: ['payment-providers'],
  payment: ['payments', 'stats'],
  webhook: ['webhooks'],
  admin: ['admins', 'me'],
  settings: ['settings'],
};

let connected = false;
const listeners = new Set<() => void>();
const setConnected = (v: boolean) => {
  if (connected === v) return;
  connected = v;
  for (const l of listeners) l();
};

/** Whether the live stream is connected (screens poll only while it is not). */
export function useLive(): boolean {
  return useSyncExternalStore(
    (l) => {
      listeners.add(l);
      return () => listeners.delete(l);
    },
    () => connected,
  );
}

/** A refetch interval that applies only while the live stream is down. */
export function useFallbackInterval(ms: number): number | false {
  return useLive() ? false : ms;
}

function onEvent(event: string, data: string) {
  if (event === 'ready') {
    setConnected(true);
    return;
  }
  if (event === 'resync') {
    void queryClient.invalidateQueries();
    return;
  }
  let body: { ids?: string[]; all?: boolean; entities?: string[]; id?: string; status?: string };
  try {
    body = JSON.parse(data);
  } catch {
    return;
  }
  if (event === 'nodes') {
    // Lists of nodes and the dashboard; the open node pages of the ids named (or every one).
    void queryClient.invalidateQueries({
      predicate: (q) => {
        const [root, kind, id] = q.queryKey as unknown[];
        if (root === 'stats') return true;
        if (root !== 'nodes') return false;
        if (kind !== 'one') return true;
        return Boolean(body.all) || (body.ids ?? []).includes(String(id));
      },
    });
  } else if (event === 'bulk_job' && typeof body.id === 'string') {
    // A bulk job's progress ({id, status, done, total, skipped}) into its query: the progress bar
    // of the screen that started it reads it there (also when it arrives before the 202 does).
    const key = ['bulk-jobs', body.id];
    queryClient.setQueryData(key, (old: object | undefined) => ({ ...old, ...body }));
    // At its end the whole record (finished_at, error) is read once.
    if (body.status === 'done' || body.status === 'failed') void queryClient.invalidateQueries({ queryKey: key });
  } else if (event === 'changed') {
    const roots = new Set((body.entities ?? []).flatMap((e) => QUERIES[e] ?? []));
    if (roots.size > 0) void queryClient.invalidateQueries({ predicate: (q) => roots.has(String(q.queryKey[0])) });
  }
}

let abort: AbortController | null = null;
let running = false;

/** Starts the stream for the signed-in tab; returns the way to stop it (sign-out). */
export function startLiveEvents(): () => void {
  running = true;
  const onVisibility = () => {
    if (document.hidden) close();
    else if (running && !abort) {
      void queryClient.invalidateQueries();
      connect(0);
    }
  };
  document.addEventListener('visibilitychange', onVisibility);
  if (!document.hidden) connect(0);
  return () => {
    running = false;
    document.removeEventListener('visibilitychange', onVisibility);
    close();
  };
}

function close() {
  abort?.abort();
  abort = null;
  setConnected(false);
}

function connect(attempt: number) {
  const controller = new AbortController();
  abort = controller;
  let reached = false;
  readEventStream(
    `${API_BASE}/events`,
    (e) => {
      if (e.event === 'ready') reached = true;
      onEvent(e.event, e.data);
    },
    controller.signal,
  )
    .catch(() => undefined)
    .finally(() => {
      if (controller.signal.aborted || !running) return;
      // Ended (token expiry, a restart) or failed: poll meanwhile, read everything again once back.
      setConnected(false);
      abort = null;
      // A stream that was up (ended by its token's expiry) reconnects at once; failures back off.
      const next = reached ? 0 : attempt + 1;
      const delay = next === 0 ? 250 : Math.min(30_000, 1000 * 2 ** next) * (0.5 + Math.random() / 2);
      setTimeout(() => {
        if (!running || abort || document.hidden) return;
        void queryClient.invalidateQueries();
        connect(next);
      }, delay);
    });
}
