// `pnpm bench:desired-state [big-node] [latency] [fan-out]`: the desired-state benchmarks of
// issue 5, each in its own process, one after the other (all three when none is named); each
// appends its section to bench/BENCHMARKS.md. See the section "Desired state" there.
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const PARTS: Record<string, string> = {
  'big-node': 'big-node.ts', // 1. compile + send of a 100,000-user node
  latency: 'latency.ts', // 2. change -> agent latency, one small node
  'fan-out': 'fan-out.ts', // 3. one change reaching 1,000 connected nodes
};
const asked = process.argv.slice(2);
const unknown = asked.filter((p) => !(p in PARTS));
if (unknown.length) {
  process.stderr.write(`unknown part(s): ${unknown.join(', ')}; parts: ${Object.keys(PARTS).join(', ')}\n`);
  process.exit(2);
}
const failed: string[] = [];
for (const part of asked.length ? asked : Object.keys(PARTS)) {
  process.stderr.write(`\n== desired state: ${part}\n`);
  const r = spawnSync(process.execPath, ['--import', 'tsx', join(here, PARTS[part] as string)], { stdio: 'inherit' });
  if (r.status !== 0) failed.push(`${part} (${r.signal ?? `exit ${r.status}`})`);
}
if (failed.length) {
  process.stderr.write(`failed: ${failed.join(', ')}\n`);
  process.exit(1);
}
