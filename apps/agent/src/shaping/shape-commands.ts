import { isIPv4 } from 'node:net';

/**
 * The kernel objects of per-user speed caps and the commands that make them (nft scripts for
 * `nft -f -`, lines for `tc -batch -`, lines for `ip -batch -`). Pure: the Shaper decides what
 * changes, these only spell it.
 *
 * Download (towards the client): an HTB root `5c00:` on each shaped device, no default class
 * (`default 0`: unclassified packets take HTB's direct queue, unshaped); one class `5c00:<minor>`
 * per capped user (rate = ceil = the cap) with two leaves, small packets and the rest. The leaf
 * is chosen by skb->priority: HTB takes a priority equal to one of its leaf classes' ids before
 * any filter (sch_htb.c htb_classify), and nftables sets the priority in postrouting from maps
 * keyed by the client's address and port (`table inet svc_shape`): down4/down6 give the bulk
 * leaf, small4/small6 (looked up only for packets under 128 bytes) the small one.
 *
 * Upload (from the client): tc ingress runs before netfilter, so no map can pick the class. The
 * ingress qdisc of the device holds one u32 filter per capped connection (client address and
 * port, in a 256-bucket hash table on the low byte of the source port) that redirects it
 * (mirred) to the device's IFB `svcup<ifindex>`; the IFB's HTB root holds two u32 filters per
 * connection in the same buckets, the small packets' first, each with its leaf as classid.
 * Other packets never leave the device's ingress path.
 *
 * No filter hangs on a user's class: u32 gives each filter list its own hash table, whose ids
 * (12 bits) a qdisc shares, so filters per class ran out at 682 users (3 each) and took the
 * kernel time quadratic in the users before that (bench/BENCHMARKS.md).
 */
export const HTB_MAJOR = 0x5c00;
/** u32 hash tables (12-bit ids) and filter priorities, IPv4 and IPv6. */
export const HT4 = 0x5c;
export const HT6 = 0x5d;
export const PRIO4 = 0x5c4;
export const PRIO6 = 0x5c6;
export const NFT_TABLE = 'svc_shape';
/** Connections a u32 bucket holds: on the IFB each takes two nodes (12 bits of the handle). */
export const MAX_NODES_PER_BUCKET = 0x7ff;

const hex = (n: number): string => n.toString(16);
export const classId = (minor: number): string => `${hex(HTB_MAJOR)}:${hex(minor)}`;
export const ifbName = (ifindex: number): string => `svcup${ifindex}`;

/** A client connection: its address (IPv6 without brackets) and port. */
export interface Tuple {
  host: string;
  port: number;
}

/** The place of a tuple's u32 filter: hash table, bucket (low byte of the port), node. */
export interface FilterHandle {
  v6: boolean;
  bucket: number;
  node: number;
}

export const filterHandle = (h: FilterHandle): string => `${hex(h.v6 ? HT6 : HT4)}:${hex(h.bucket)}:${hex(h.node)}`;

/**
 * HTB parameters of a cap: burst about 10 ms of the rate (at least ten full frames). The bulk
 * leaf's queue: for download a bfifo of about 250 ms of the rate, at least three 64 KiB GSO
 * packets (the sender is the engine on this host: TCP small queues keep its queue short); for
 * upload a pfifo_head_drop of about 100 ms of full frames, at least 32 packets. A remote sender
 * fills the queue until it drops; dropping the oldest packet lets it see the loss from the
 * packets behind (fast retransmit) instead of a timeout, which a deep queue (seconds at 1 Mbit/s)
 * stretches to seconds. Measured through v2ray, a connection that starts unshaped (until its
 * access line is read) and then meets a 1 Mbit/s cap: bfifo 192 KiB 0.42-0.58 Mbit/s, bfifo
 * 512 KiB 0.19-0.90, pfifo_head_drop 32 0.93-0.94.
 */
export function htbShape(bps: number, upload = false): { rate: string; burst: number; quantum: number; limit: number } {
  const bytesPerSecond = Math.max(1, Math.floor(bps / 8));
  return {
    rate: `${Math.max(8, Math.floor(bps))}bit`,
    burst: Math.max(15_140, Math.floor(bytesPerSecond / 100)),
    quantum: Math.min(200_000, Math.max(1_514, Math.floor(bytesPerSecond / 10))),
    limit: upload ? Math.max(32, Math.ceil(bytesPerSecond / 10 / 1_514)) : Math.max(3 * 65_536, Math.floor(bytesPerSecond / 4)),
  };
}

/** The leaves of a user's class: small packets (under 128 bytes: pure ACKs, handshakes) and the rest. */
export const SMALL = 0x4000;
export const BULK = 0x8000;

/**
 * tc lines that make (or change) a user's class on `dev`: an inner class at the cap with two
 * leaves sharing it, small packets first (prio 0, a tenth of the cap assured) and the rest
 * (prio 1, the queue of htbShape). Without the small leaf, the ACKs of the user's transfers in
 * the other direction wait behind a full queue of their data (seconds at 1 Mbit/s) and those
 * transfers stall; with it they pass first, and the user still gets no more than the cap in
 * all. The leaves are chosen by the nft maps (download) and the IFB's u32 filters (upload).
 */
export function classLines(dev: string, minor: number, bps: number, upload = false): string[] {
  const s = htbShape(bps, upload);
  const id = classId(minor);
  const rate = Math.max(8, Math.floor(bps));
  const small = Math.max(8, Math.floor(rate / 10));
  const params = `burst ${s.burst} cburst ${s.burst} quantum ${s.quantum}`;
  return [
    `class replace dev ${dev} parent ${hex(HTB_MAJOR)}: classid ${id} htb rate ${s.rate} ceil ${s.rate} ${params}`,
    `class replace dev ${dev} parent ${id} classid ${classId(minor | SMALL)} htb rate ${small}bit ceil ${s.rate} prio 0 ${params}`,
    `class replace dev ${dev} parent ${id} classid ${classId(minor | BULK)} htb rate ${rate - small}bit ceil ${s.rate} prio 1 ${params}`,
    `qdisc replace dev ${dev} parent ${classId(minor | BULK)} handle ${hex(minor)}: ${upload ? 'pfifo_head_drop' : 'bfifo'} limit ${s.limit}`,
  ];
}

/** tc lines that remove a user's class: its leaves, then the class. */
export const classDelLines = (dev: string, minor: number): string[] => [
  `class del dev ${dev} classid ${classId(minor | SMALL)}`,
  `class del dev ${dev} classid ${classId(minor | BULK)}`,
  `class del dev ${dev} classid ${classId(minor)}`,
];

/** The u32 match of a tuple's packets from the client (source address and port). */
function u32Match(t: Tuple): string {
  return isIPv4(t.host)
    ? `match ip src ${t.host}/32 match ip sport ${t.port} 0xffff`
    : `match ip6 src ${t.host}/128 match ip6 sport ${t.port} 0xffff`;
}

const proto = (v6: boolean) => (v6 ? 'ipv6' : 'ip');
const prio = (v6: boolean) => (v6 ? PRIO6 : PRIO4);

/** The hash tables of the upload filters under `parent` (ffff: on the device, 5c00: on its IFB). */
export function hashTableLines(dev: string, parent: string): string[] {
  const lines: string[] = [];
  for (const v6 of [false, true]) {
    const p = `dev ${dev} parent ${parent} prio ${prio(v6)} protocol ${proto(v6)} u32`;
    lines.push(`filter add ${p.replace(' u32', ` handle ${hex(v6 ? HT6 : HT4)}: u32`)} divisor 256`);
    // The source port is the first half of the word after the IP header (20 bytes for IPv4
    // without options, 40 for IPv6 without extension headers); its low byte picks the bucket.
    lines.push(`filter add ${p} match u32 0 0 hashkey mask 0x00ff0000 at ${v6 ? 40 : 20} link ${hex(v6 ? HT6 : HT4)}:`);
  }
  return lines;
}

/** The upload filter of a tuple on the device's ingress: to the IFB. */
export function ingressFilterLine(dev: string, ifb: string, t: Tuple, h: FilterHandle): string {
  return `filter add dev ${dev} parent ffff: prio ${prio(h.v6)} handle ${filterHandle(h)} protocol ${proto(h.v6)} u32 ht ${hex(h.v6 ? HT6 : HT4)}:${hex(h.bucket)}: ${u32Match(t)} action mirred egress redirect dev ${ifb}`;
}

/** The IFB's nodes of a tuple whose device filter is node `h.node`: 2n-1 (small packets, first in the bucket) and 2n. */
const ifbHandles = (h: FilterHandle): [FilterHandle, FilterHandle] => [
  { ...h, node: 2 * h.node - 1 },
  { ...h, node: 2 * h.node },
];

/**
 * The upload filters of a tuple on the IFB: its small packets (IPv4 total length, IPv6 payload
 * length under 128) to the user's small leaf, the rest to its bulk leaf. u32 keeps a bucket's
 * nodes in handle order, so the small one is tried first.
 */
export function ifbFilterLines(ifb: string, t: Tuple, h: FilterHandle, minor: number): string[] {
  const [small, bulk] = ifbHandles(h);
  const at = `${hex(h.v6 ? HT6 : HT4)}:${hex(h.bucket)}:`;
  const head = (x: FilterHandle) =>
    `filter add dev ${ifb} parent ${hex(HTB_MAJOR)}: prio ${prio(h.v6)} handle ${filterHandle(x)} protocol ${proto(h.v6)} u32 ht ${at}`;
  return [
    `${head(small)} ${u32Match(t)} match u16 0 0xff80 at ${h.v6 ? 4 : 2} classid ${classId(minor | SMALL)}`,
    `${head(bulk)} ${u32Match(t)} classid ${classId(minor | BULK)}`,
  ];
}

export function filterDelLine(dev: string, parent: string, h: FilterHandle): string {
  return `filter del dev ${dev} parent ${parent} prio ${prio(h.v6)} handle ${filterHandle(h)} protocol ${proto(h.v6)} u32`;
}

/** The IFB's two filters of a tuple, removed. */
export const ifbFilterDelLines = (ifb: string, h: FilterHandle): string[] =>
  ifbHandles(h).map((x) => filterDelLine(ifb, `${hex(HTB_MAJOR)}:`, x));

/** tc lines that set a device up for shaping: the HTB roots, the ingress qdisc, the hash tables. */
export function deviceSetupLines(dev: string, ifb: string, ingressPresent: boolean): string[] {
  return [
    `qdisc replace dev ${dev} root handle ${hex(HTB_MAJOR)}: htb default 0`,
    `qdisc replace dev ${ifb} root handle ${hex(HTB_MAJOR)}: htb default 0`,
    ...(ingressPresent ? [] : [`qdisc add dev ${dev} handle ffff: ingress`]),
    ...hashTableLines(dev, 'ffff:'),
    ...hashTableLines(ifb, `${hex(HTB_MAJOR)}:`),
  ];
}

/** ip lines that make the IFB of a device. */
export const ifbLinkLines = (ifb: string): string[] => [`link add ${ifb} txqueuelen 1000 type ifb`, `link set ${ifb} up`];

const quote = (dev: string) => JSON.stringify(dev);

/** An nft element `addr . port : classid` (the leaf: small or bulk). */
export const nftElement = (t: Tuple, leaf: number): string => `${t.host} . ${t.port} : ${classId(leaf)}`;

/**
 * The whole nft table, replaced in one transaction (add + delete + define: no moment without
 * it), with its elements. The rules run in postrouting on the shaped devices only: every packet
 * of a capped tuple gets its user's bulk leaf, then one under 128 bytes (an ACK, a handshake)
 * its small leaf.
 */
export function nftTableScript(devices: string[], down: Array<{ tuple: Tuple; minor: number }>): string {
  const devs = devices.map(quote).join(', ');
  const map = (name: string, type: string, v6: boolean, leaf: number) => {
    const els = down.filter((d) => isIPv4(d.tuple.host) !== v6).map((d) => nftElement(d.tuple, d.minor | leaf));
    return `  map ${name} { type ${type} . inet_service : classid; ${els.length > 0 ? `elements = { ${els.join(', ')} }` : ''} }`;
  };
  const lines = [
    `table inet ${NFT_TABLE} {}`,
    `delete table inet ${NFT_TABLE}`,
    `table inet ${NFT_TABLE} {`,
    map('down4', 'ipv4_addr', false, BULK),
    map('down6', 'ipv6_addr', true, BULK),
    map('small4', 'ipv4_addr', false, SMALL),
    map('small6', 'ipv6_addr', true, SMALL),
    '  chain postrouting {',
    '    type filter hook postrouting priority 0; policy accept;',
    `    oifname { ${devs} } meta l4proto { tcp, udp } meta priority set ip daddr . th dport map @down4`,
    `    oifname { ${devs} } meta l4proto { tcp, udp } meta priority set ip6 daddr . th dport map @down6`,
    `    oifname { ${devs} } meta l4proto { tcp, udp } meta length < 128 meta priority set ip daddr . th dport map @small4`,
    `    oifname { ${devs} } meta l4proto { tcp, udp } meta length < 128 meta priority set ip6 daddr . th dport map @small6`,
    '  }',
    '}',
  ];
  return `${lines.join('\n')}\n`;
}

/** nft lines that add and delete map elements, each tuple in both maps of its family (one transaction with `nft -f -`). */
export function nftElementScript(add: Array<{ tuple: Tuple; minor: number }>, del: Tuple[]): string {
  const lines: string[] = [];
  const fam = (t: Tuple) => (isIPv4(t.host) ? '4' : '6');
  for (const t of del)
    for (const m of ['down', 'small']) lines.push(`delete element inet ${NFT_TABLE} ${m}${fam(t)} { ${t.host} . ${t.port} }`);
  for (const a of add) {
    lines.push(`add element inet ${NFT_TABLE} down${fam(a.tuple)} { ${nftElement(a.tuple, a.minor | BULK)} }`);
    lines.push(`add element inet ${NFT_TABLE} small${fam(a.tuple)} { ${nftElement(a.tuple, a.minor | SMALL)} }`);
  }
  return lines.length > 0 ? `${lines.join('\n')}\n` : '';
}
