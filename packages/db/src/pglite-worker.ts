import { Worker } from 'node:worker_threads';
import type { PGliteSession, SessionResult } from './pglite-dialect.ts';

type Reply =
  | { id: number; ok: true; result?: SessionResult }
  | { id: number; ok: false; error: Record<string, unknown> & { message: string } };

/**
 * PGlite on a worker thread. A point query costs PGlite ~150 us of WebAssembly; on the main
 * thread that is 150 us in which no request is parsed, no token verified. On its own thread
 * the database uses the second core and the event loop only pays for a message each way.
 * Errors keep their PostgreSQL fields (code, constraint ...) across the thread boundary.
 */
export async function startPGliteWorker(dataDir: string): Promise<PGliteSession> {
  const worker = new Worker(new URL('./pglite-worker-thread.mjs', import.meta.url), { workerData: { dataDir } });
  const pending = new Map<number, { resolve: (r: SessionResult | undefined) => void; reject: (e: Error) => void }>();
  let nextId = 1;
  let closed = false;
  let failure: Error | undefined;

  await new Promise<void>((resolve, reject) => {
    worker.once('message', (m: { ready?: boolean }) =>
      m.ready ? resolve() : reject(new Error('PGlite worker: unexpected first message')),
    );
    worker.once('error', reject);
  });

  worker.on('message', (m: Reply) => {
    const p = pending.get(m.id);
    if (!p) return;
    pending.delete(m.id);
    if (m.ok) p.resolve(m.result);
    else p.reject(Object.assign(new Error(m.error.message), m.error));
  });
  const failAll = (err: Error) => {
    failure = err;
    closed = true;
    for (const p of pending.values()) p.reject(err);
    pending.clear();
  };
  worker.on('error', (err) => failAll(err));
  worker.on('exit', (code) => {
    if (!closed) failAll(new Error(`the embedded database thread exited (code ${code})`));
    closed = true;
  });

  const send = (msg: Record<string, unknown>) =>
    new Promise<SessionResult | undefined>((resolve, reject) => {
      if (failure) return reject(failure);
      if (closed) return reject(new Error('the embedded database is closed'));
      const id = nextId++;
      pending.set(id, { resolve, reject });
      worker.postMessage({ ...msg, id });
    });

  return {
    get closed() {
      return closed;
    },
    async query(sql, params) {
      return (await send({ op: 'query', sql, params })) as SessionResult;
    },
    async close() {
      if (closed) return;
      await send({ op: 'close' });
      closed = true;
      for (const p of pending.values()) p.reject(new Error('the embedded database is closed'));
      pending.clear();
      await worker.terminate();
    },
  };
}
