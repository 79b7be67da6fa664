import { capabilityMissing, type Runner } from './shape-runner.ts';

/** The Shaper's probe (shaper.ts): what this node can shape, found without touching its devices. */

/** What the probe needs: the devices asked for (default: those of the default routes) and the capability check. */
export interface ProbeOptions {
  devices?: string[] | undefined;
  /** Why the process cannot administer the network (default: CapEff lacks CAP_NET_ADMIN), null when it can. */
  capability?: (() => Promise<string | null>) | undefined;
}

/** A shaped device and its IFB (`svcup<ifindex>`). */
export interface ShapeDevice {
  name: string;
  ifb: string;
}

/**
 * Checks that this node can shape without touching its devices: CAP_NET_ADMIN, nft and tc,
 * the devices, and every kernel piece on a throwaway IFB (HTB, u32, ingress, mirred) and a
 * throwaway nft table (a classid map and `meta priority set`). Returns why not ('' when it
 * can) and the devices found (null when they could not be named).
 */
export async function probeShaping(run: Runner, opts: ProbeOptions): Promise<{ error: string; devices: ShapeDevice[] | null }> {
  const found: ShapeDevice[] = [];
  const error = await check(run, opts, found).catch((err: unknown) => `speed caps cannot be probed: ${String(err)}`);
  return { error, devices: found.length > 0 ? found : null };
}

async function check(run: Runner, opts: ProbeOptions, found: ShapeDevice[]): Promise<string> {
  const cap = await (opts.capability ?? capabilityMissing)();
  if (cap) return cap;
  for (const [bin, arg, pkg] of [
    ['nft', '--version', 'nftables'],
    ['tc', '-V', 'iproute2'],
    ['ip', '-V', 'iproute2'],
  ] as const) {
    const r = await run(bin, [arg]).catch((err: NodeJS.ErrnoException) => ({
      code: -1,
      stdout: '',
      stderr: err.code ?? String(err),
    }));
    if (r.code !== 0) return `${bin} is not usable (${firstLine(r.stderr) || 'not installed'}; install ${pkg})`;
  }
  const names = opts.devices && opts.devices.length > 0 ? opts.devices : await defaultDevices(run);
  if (names.length === 0) return 'no device to shape: no default route and no SVC_AGENT_SHAPE_DEVICES';
  const devices: ShapeDevice[] = [];
  for (const name of names) {
    const index = await ifindex(run, name);
    if (index === null) return `device ${name} does not exist`;
    devices.push({ name, ifb: `svcup${index}` });
  }
  found.push(...devices);
  // Named for this process: agents probing at the same time (tests) do not take each other's.
  const probeIfb = `svcp${process.pid}`;
  await run('ip', ['link', 'del', probeIfb]).catch(() => null);
  const ip = await run('ip', ['link', 'add', probeIfb, 'type', 'ifb']);
  if (ip.code !== 0) return `the kernel cannot make an IFB device (CONFIG_IFB): ${firstLine(ip.stderr)}`;
  try {
    const checks: Array<[string, string]> = [
      ['HTB (CONFIG_NET_SCH_HTB)', `qdisc add dev ${probeIfb} root handle 5c00: htb default 0`],
      ['HTB classes', `class add dev ${probeIfb} parent 5c00: classid 5c00:1 htb rate 1mbit`],
      ['bfifo (CONFIG_NET_SCH_FIFO)', `qdisc add dev ${probeIfb} parent 5c00:1 handle 1: bfifo limit 100000`],
      [
        'the u32 classifier (CONFIG_NET_CLS_U32)',
        `filter add dev ${probeIfb} parent 5c00: prio 1 protocol ip u32 match ip src 192.0.2.1/32 classid 5c00:1`,
      ],
      ['the ingress qdisc (CONFIG_NET_SCH_INGRESS)', `qdisc add dev ${probeIfb} handle ffff: ingress`],
      [
        'the mirred action (CONFIG_NET_ACT_MIRRED)',
        `filter add dev ${probeIfb} parent ffff: prio 1 protocol ip u32 match ip src 192.0.2.1/32 action mirred egress redirect dev ${probeIfb}`,
      ],
    ];
    for (const [what, line] of checks) {
      const r = await run('tc', ['-batch', '-'], `${line}\n`);
      if (r.code !== 0) return `tc: ${what} is not available: ${firstLine(r.stderr)}`;
    }
  } finally {
    await run('ip', ['link', 'del', probeIfb]).catch(() => null);
  }
  const nft = await run(
    'nft',
    ['-f', '-'],
    [
      `table inet svc_shape_probe${process.pid} {`,
      '  map m { type ipv4_addr . inet_service : classid; elements = { 192.0.2.1 . 1 : 5c00:1 } }',
      '  chain c {',
      '    type filter hook postrouting priority 0; policy accept;',
      `    oifname "${probeIfb}" meta l4proto { tcp, udp } meta priority set ip daddr . th dport map @m`,
      '  }',
      '}',
      `delete table inet svc_shape_probe${process.pid}`,
      '',
    ].join('\n'),
  );
  if (nft.code !== 0) return `nftables cannot set the priority from a map (CONFIG_NF_TABLES_INET): ${firstLine(nft.stderr)}`;
  for (const d of devices) {
    const root = await run('tc', ['qdisc', 'show', 'dev', d.name, 'root']);
    const words = root.stdout.trim().split(/\s+/);
    // "qdisc <kind> <handle> root ...": a default qdisc has handle 0:, ours is htb 5c00:.
    const kind = words[1] ?? '';
    const handle = words[2] ?? '';
    if (handle !== '0:' && !(kind === 'htb' && handle === '5c00:'))
      return `device ${d.name} has a root qdisc of its own (${kind} ${handle}); speed caps would replace it`;
  }
  return '';
}

async function defaultDevices(run: Runner): Promise<string[]> {
  const out = new Set<string>();
  for (const family of ['-4', '-6']) {
    const r = await run('ip', [family, '-o', 'route', 'show', 'default']).catch(() => null);
    for (const line of r?.stdout.split('\n') ?? []) {
      const words = line.trim().split(' ');
      const at = words.indexOf('dev');
      if (at >= 0 && words[at + 1]) out.add(words[at + 1] as string);
    }
  }
  return [...out];
}

async function ifindex(run: Runner, name: string): Promise<number | null> {
  const r = await run('ip', ['-o', 'link', 'show', 'dev', name]).catch(() => null);
  if (!r || r.code !== 0) return null;
  const n = Number.parseInt(r.stdout, 10);
  return Number.isInteger(n) && n > 0 ? n : null;
}

const firstLine = (text: string) => text.trim().split('\n')[0] ?? '';
