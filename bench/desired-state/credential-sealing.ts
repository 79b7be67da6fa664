// `pnpm bench:sealing`: what sealing proxy credentials at rest would cost the desired-state
// compile (issue 12.9). A 100,000-user node of the bench:desired-state shape (a vless and a
// trojan inbound, every subscription granted both), in this process, no database: the compile
// as it is (credentials in clear: the baseline, measured in the same run), the same compile
// after opening each subscription's two sealed credentials with AES-256-GCM under the
// installation key (domain decryptSecret: what a sealed column costs when nothing is cached),
// and after looking each up in a warm per-process cache of opened values. Appends to
// bench/BENCHMARKS.md.
import { randomBytes, randomUUID } from 'node:crypto';
import { appendFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import { compileNodeConfig, type ModelInbound, type ModelSubscription, type NodeModel } from '@svc/desired-state';
import { decryptSecret, encryptSecret, XRAY_CAPABILITIES } from '@svc/domain';

const USERS = Number(process.env.BENCH_USERS ?? 100_000);
const ROUNDS = 7;
const key = randomBytes(32);

const inbound = (id: string, protocol: 'vless' | 'trojan', port: number): ModelInbound => ({
  id,
  tag: `tag-${id}`,
  port,
  listen: null,
  chain_id: null,
  protocol,
  stream: { network: 'tcp', security: 'none', tcp: { accept_proxy_protocol: false } },
  reality_private_key: null,
  sniffing: { enabled: true, dest_override: ['http', 'tls'], route_only: false },
  vless_flow: null,
  shadowsocks_method: null,
  shadowsocks_server_key: null,
  block_bittorrent: false,
});
const inbounds = [inbound('a', 'vless', 443), inbound('b', 'trojan', 8443)];
const clear = Array.from({ length: USERS }, (_, i) => ({
  id: `sub-${i}`,
  vless_uuid: randomUUID(),
  trojan_password: randomBytes(24).toString('base64url'),
}));
const sealed = clear.map((c) => ({
  id: c.id,
  vless_enc: encryptSecret(key, c.vless_uuid),
  trojan_enc: encryptSecret(key, c.trojan_password),
}));
const cache = new Map<string, string>();
for (const s of sealed) {
  cache.set(s.vless_enc, decryptSecret(key, s.vless_enc));
  cache.set(s.trojan_enc, decryptSecret(key, s.trojan_enc));
}

const subscription = (id: string, vless: string, trojan: string): ModelSubscription => ({
  id,
  status: 'active',
  traffic_limit_bytes: null,
  expires_at: null,
  client_status: 'active',
  vless_uuid: vless,
  vmess_uuid: '',
  trojan_password: trojan,
  shadowsocks_password: '',
  inbound_ids: ['a', 'b'],
});
const model = (subscriptions: ModelSubscription[]): NodeModel => ({
  node_id: 'n0',
  revision: 1,
  now: new Date(),
  engine: XRAY_CAPABILITIES,
  inbounds,
  subscriptions,
  chains: [],
  certificates: [],
});

const variants: Record<string, () => unknown> = {
  'clear (today, the baseline)': () => compileNodeConfig(model(clear.map((c) => subscription(c.id, c.vless_uuid, c.trojan_password)))),
  'sealed, opened per compile': () =>
    compileNodeConfig(model(sealed.map((s) => subscription(s.id, decryptSecret(key, s.vless_enc), decryptSecret(key, s.trojan_enc))))),
  'sealed, warm per-process cache of opened values': () =>
    compileNodeConfig(model(sealed.map((s) => subscription(s.id, cache.get(s.vless_enc) ?? '', cache.get(s.trojan_enc) ?? '')))),
};
const times: Record<string, number[]> = {};
for (let r = 0; r < ROUNDS; r++) {
  for (const [name, run] of Object.entries(variants)) {
    const t = performance.now();
    run();
    const list = times[name] ?? [];
    list.push(performance.now() - t);
    times[name] = list;
  }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
const base = median(times['clear (today, the baseline)'] ?? []);
const lines = [
  `### ${new Date().toISOString().slice(0, 10)} — sealing proxy credentials: compile of a ${USERS.toLocaleString('en-US')}-user node (vless + trojan)`,
  '',
  `Machine: ${cpus().length} × ${cpus()[0]?.model.trim()}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}. Median of ${ROUNDS} rounds (the first, JIT warm-up, included in the set).`,
  '',
  '| Credentials | compile ms (median) | added per compile | per credential |',
  '|---|---|---|---|',
  ...Object.entries(times).map(([name, xs]) => {
    const m = median(xs);
    return `| ${name} | ${m.toFixed(0)} | ${(m - base).toFixed(0)} ms | ${(((m - base) * 1000) / (USERS * 2)).toFixed(2)} µs |`;
  }),
  '',
];
process.stdout.write(`${lines.join('\n')}\n`);
appendFileSync(join(import.meta.dirname, '..', 'BENCHMARKS.md'), `\n${lines.join('\n')}`);
