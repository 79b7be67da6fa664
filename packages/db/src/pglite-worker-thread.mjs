// The worker side of the embedded database: owns the PGlite instance on its own thread, so
// its WebAssembly work runs beside the event loop instead of on it. Plain JavaScript: worker
// threads do not inherit the TypeScript loader. Protocol in pglite-worker.ts.
import { parentPort, workerData } from 'node:worker_threads';
import { PGlite } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';

const db = await PGlite.create(workerData.dataDir, { ...(workerData.options ?? {}), extensions: { pg_trgm } });

function serializeError(err) {
  const out = { message: err?.message ?? String(err), name: err?.name ?? 'Error' };
  for (const k of ['code', 'detail', 'hint', 'constraint', 'table', 'column', 'schema', 'severity', 'position']) {
    if (err && err[k] !== undefined) out[k] = err[k];
  }
  return out;
}

parentPort.on('message', async (msg) => {
  if (msg.op === 'close') {
    await db.close();
    parentPort.postMessage({ id: msg.id, ok: true });
    parentPort.close();
    return;
  }
  try {
    const res = await db.query(msg.sql, msg.params);
    parentPort.postMessage({ id: msg.id, ok: true, result: { rows: res.rows, affectedRows: res.affectedRows, fields: res.fields.length } });
  } catch (err) {
    parentPort.postMessage({ id: msg.id, ok: false, error: serializeError(err) });
  }
});
parentPort.postMessage({ ready: true });
