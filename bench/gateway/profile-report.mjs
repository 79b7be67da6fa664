// `node bench/gateway/profile-report.mjs <file.cpuprofile> [windows.json]`: where a product
// process spent its CPU, from a profile written by cpu-profile.mjs. With a windows file (JSON
// [[startµs, endµs], ...] on the monotonic clock, as bench/desired-state writes with
// BENCH_PROFILE_WINDOWS) only the samples inside those spans count. Prints the busy time by
// category (each sample once, by its leaf frame and, where that is not telling, its stack) and
// the functions with the most self time.
import { readFileSync } from 'node:fs';

const [profileFile, windowsFile] = process.argv.slice(2);
if (!profileFile) {
  process.stderr.write('usage: node bench/gateway/profile-report.mjs <file.cpuprofile> [windows.json]\n');
  process.exit(2);
}
const profile = JSON.parse(readFileSync(profileFile, 'utf8'));
const windows = windowsFile ? JSON.parse(readFileSync(windowsFile, 'utf8')).map(([a, b]) => [Number(a), Number(b)]) : null;
const inside = (t) => !windows || windows.some(([a, b]) => t >= a && t <= b);
const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const stackOf = (id) => {
  const frames = [];
  for (let k = id; k !== undefined; k = parent.get(k)) frames.push(nodes.get(k).callFrame);
  return frames;
};
const short = (url) =>
  url.replace(/.*node_modules\/\.pnpm\/[^/]+\/node_modules\//, '').replace(/^file:\/\/.*?\/(apps|packages|bench)\//, '$1/');

function category(leaf, frames) {
  const fn = leaf.functionName;
  const url = leaf.url;
  if (fn === '(garbage collector)') return 'garbage collector';
  if (fn === '(program)') return '(program): native work outside any JS frame';
  const any = (re) => frames.some((f) => re.test(f.url));
  if (!url && /^(writev|writeBuffer|writeUtf8String|writeLatin1String)$/.test(fn)) {
    if (any(/\/pg@|pg-protocol/)) return 'socket writes to PostgreSQL (the syscalls)';
    if (any(/http2|grpc/)) return 'socket writes to agents (TLS encryption + syscalls)';
    return 'other socket writes';
  }
  if (any(/controlplane\.ts$|@bufbuild\/protobuf/) && frames.some((f) => /encode|finish|fork|join|string|raw/.test(f.functionName)))
    return 'protobuf encode (ts-proto over @bufbuild/protobuf)';
  if (frames.some((f) => f.functionName === 'compileNodeConfig')) return 'compileNodeConfig';
  if (/kysely/.test(url)) return 'kysely (building and compiling queries)';
  if (/\/pg@|pg-protocol|pg-types|postgres-array|pg-pool/.test(url) || (!url && any(/\/pg@|pg-protocol/)))
    return 'pg driver (protocol, row parsing)';
  if (/grpc|http2/.test(url) || (!url && any(/grpc|http2/))) return 'grpc-js, nice-grpc, HTTP/2 (JS side)';
  if (/packages\/|apps\//.test(url)) return 'our code (apps/, packages/)';
  return 'other (Node internals: streams, events, promises, timers)';
}

let t = profile.startTime;
let busy = 0;
let idle = 0;
const byCategory = new Map();
const bySelf = new Map();
for (let i = 0; i < profile.samples.length; i++) {
  t += profile.timeDeltas[i];
  if (!inside(t)) continue;
  const dt = profile.timeDeltas[i + 1] ?? 0;
  const node = nodes.get(profile.samples[i]);
  const leaf = node.callFrame;
  if (leaf.functionName === '(idle)') {
    idle += dt;
    continue;
  }
  busy += dt;
  const c = category(leaf, stackOf(node.id));
  byCategory.set(c, (byCategory.get(c) ?? 0) + dt);
  const k = `${leaf.functionName || '(anonymous)'} ${short(leaf.url)}${leaf.url ? `:${leaf.lineNumber + 1}` : ''}`;
  bySelf.set(k, (bySelf.get(k) ?? 0) + dt);
}
const span = windows ? windows.reduce((s, [a, b]) => s + (b - a), 0) : profile.endTime - profile.startTime;
const msOf = (us) => (us / 1000).toFixed(0);
const rows = (m, n) =>
  [...m]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([k, v]) => `| ${k} | ${msOf(v)} | ${((100 * v) / busy).toFixed(1)}% |`)
    .join('\n');
process.stdout.write(
  `${windows ? `${windows.length} windows, ` : ''}${msOf(span)} ms of wall clock: busy ${msOf(busy)} ms (${((100 * busy) / span).toFixed(0)}%), idle ${msOf(idle)} ms\n\n` +
    `| category | ms | share of busy |\n|---|---|---|\n${rows(byCategory, 20)}\n\n` +
    `| function (self time) | ms | share of busy |\n|---|---|---|\n${rows(bySelf, 15)}\n`,
);
