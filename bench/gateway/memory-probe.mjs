// Preloaded into the control-plane process by the gateway benchmarks (NODE_OPTIONS=--import):
// on SIGUSR2 it collects garbage (a full GC, so the JS heap counts only what is held) and prints
// process.memoryUsage() as one JSON line on stdout, so the bench can split the RSS into the JS
// heap, external/array buffers and the rest (native: TLS, HTTP/2). With BENCH_HEAP_SNAPSHOT_DIR
// set it also writes a heap snapshot there (what holds the heap per stream: bench/gateway/heap-classes.mjs).
// It does nothing else; the process is the unmodified apps/control-plane/src/main.ts.
import { setFlagsFromString, writeHeapSnapshot } from 'node:v8';
import { runInNewContext } from 'node:vm';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc');
let snapshots = 0;
process.on('SIGUSR2', () => {
  gc();
  gc();
  const usage = process.memoryUsage();
  const dir = process.env.BENCH_HEAP_SNAPSHOT_DIR;
  const snapshot = dir ? writeHeapSnapshot(`${dir}/gateway-${process.pid}-${++snapshots}.heapsnapshot`) : undefined;
  process.stdout.write(`${JSON.stringify({ msg: 'bench memory', ...usage, snapshot })}\n`);
});
