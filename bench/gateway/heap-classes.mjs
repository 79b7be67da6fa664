// `node bench/gateway/heap-classes.mjs before.heapsnapshot after.heapsnapshot [streams]`: what the
// JS heap holds more of in the second snapshot than in the first (the memory probe writes them
// idle and with the streams, BENCH_HEAP_SNAPSHOT_DIR), grouped by kind and constructor, per
// stream when a count is given. Self sizes only (what each object itself takes).
import { readFileSync } from 'node:fs';

function classes(file) {
  const snap = JSON.parse(readFileSync(file, 'utf8'));
  const {
    node_fields: fields,
    node_types: [types],
  } = snap.snapshot.meta;
  const width = fields.length;
  const at = (name) => fields.indexOf(name);
  const [iType, iName, iSize] = [at('type'), at('name'), at('self_size')];
  const out = new Map();
  const nodes = snap.nodes;
  for (let i = 0; i < nodes.length; i += width) {
    const type = types[nodes[i + iType]];
    const name = type === 'string' || type === 'concatenated string' || type === 'sliced string' ? '' : snap.strings[nodes[i + iName]];
    const key = `${type}:${name.length > 60 ? `${name.slice(0, 60)}…` : name}`;
    const row = out.get(key) ?? { count: 0, size: 0 };
    row.count++;
    row.size += nodes[i + iSize];
    out.set(key, row);
  }
  return out;
}

const [a, b, streamsArg] = process.argv.slice(2);
if (!a || !b) throw new Error('usage: heap-classes.mjs before.heapsnapshot after.heapsnapshot [streams]');
const streams = Number(streamsArg ?? 1);
const before = classes(a);
const after = classes(b);
const rows = [];
let total = 0;
for (const [key, row] of after) {
  const was = before.get(key) ?? { count: 0, size: 0 };
  const size = row.size - was.size;
  total += size;
  if (size > 0) rows.push({ key, count: (row.count - was.count) / streams, bytes: size / streams });
}
rows.sort((x, y) => y.bytes - x.bytes);
console.log(`more in the second snapshot: ${(total / streams / 1024).toFixed(1)} KiB${streams > 1 ? ' per stream' : ''}`);
for (const r of rows.slice(0, 60)) console.log(`${r.bytes.toFixed(0).padStart(8)} B ${r.count.toFixed(2).padStart(7)} × ${r.key}`);
