import { describe, expect, it } from 'vitest';
import {
  classLines,
  htbShape,
  ifbFilterLines,
  ingressFilterLine,
  nftElementScript,
  nftTableScript,
} from '../../src/shaping/shape-commands.ts';
import type { Runner } from '../../src/shaping/shape-runner.ts';
import { Shaper } from '../../src/shaping/shaper.ts';
import { capLimits } from './netns.ts';

/**
 * The Shaper's commands without a kernel: what a pass sends to nft, tc and ip for a change in
 * the caps or the connections, and that nothing is sent when nothing changed. The kernel side
 * is speed-caps.test.ts (network namespaces).
 */
interface Call {
  cmd: string;
  input: string;
}

function fakeKernel(over: Partial<Record<string, { code: number; stdout?: string; stderr?: string }>> = {}) {
  const calls: Call[] = [];
  const run: Runner = async (bin, args, input) => {
    const cmd = [bin, ...args].join(' ');
    calls.push({ cmd, input: input ?? '' });
    const o = Object.entries(over).find(([k]) => cmd.startsWith(k))?.[1];
    if (o) return { code: o.code, stdout: o.stdout ?? '', stderr: o.stderr ?? '' };
    if (cmd.startsWith('ip -o link show dev eth0')) return { code: 0, stdout: '2: eth0: <BROADCAST,UP> mtu 1500\n', stderr: '' };
    if (cmd.startsWith('ip -4 -o route show default'))
      return { code: 0, stdout: 'default via 192.0.2.1 dev eth0 proto static\n', stderr: '' };
    if (cmd.startsWith('ip -o link show')) return { code: 1, stdout: '', stderr: 'Device does not exist' };
    if (cmd.startsWith('tc qdisc show dev eth0 root')) return { code: 0, stdout: 'qdisc mq 0: root\n', stderr: '' };
    return { code: 0, stdout: '', stderr: '' };
  };
  const writes = () =>
    calls.filter((c) => c.input !== '' && !c.input.includes('svcp' + process.pid) && !c.input.includes('svc_shape_probe'));
  return { run, calls, writes };
}

const noCapCheck = async () => null;

describe('speed-cap commands', () => {
  it('an HTB class per cap (rate = ceil, burst of ten frames at least) with a leaf for small packets first and one for the rest (a bfifo of three GSO packets; upload a head-drop queue of 32 packets)', () => {
    expect(htbShape(1_000_000)).toEqual({ rate: '1000000bit', burst: 15_140, quantum: 12_500, limit: 196_608 });
    expect(htbShape(1_000_000, true).limit).toBe(32);
    expect(htbShape(100_000_000, true).limit).toBe(826);
    expect(htbShape(10_000_000_000).burst).toBe(12_500_000);
    expect(classLines('eth0', 0x12, 1_000_000)).toEqual([
      'class replace dev eth0 parent 5c00: classid 5c00:12 htb rate 1000000bit ceil 1000000bit burst 15140 cburst 15140 quantum 12500',
      'class replace dev eth0 parent 5c00:12 classid 5c00:4012 htb rate 100000bit ceil 1000000bit prio 0 burst 15140 cburst 15140 quantum 12500',
      'class replace dev eth0 parent 5c00:12 classid 5c00:8012 htb rate 900000bit ceil 1000000bit prio 1 burst 15140 cburst 15140 quantum 12500',
      'qdisc replace dev eth0 parent 5c00:8012 handle 12: bfifo limit 196608',
    ]);
    // No filter hangs on the class (u32 would give each class a hash table of its own: 2,047 a qdisc).
    expect(classLines('eth0', 0x12, 1_000_000, true).join('\n')).not.toContain('filter');
  });

  it('the nft table keys the maps by client address and port (the bulk leaf; the small leaf for packets under 128 bytes) and runs on the shaped devices only', () => {
    const script = nftTableScript(['eth0'], [{ tuple: { host: '198.51.100.7', port: 50000 }, minor: 1 }]);
    expect(script).toContain('map down4 { type ipv4_addr . inet_service : classid; elements = { 198.51.100.7 . 50000 : 5c00:8001 } }');
    expect(script).toContain('map small4 { type ipv4_addr . inet_service : classid; elements = { 198.51.100.7 . 50000 : 5c00:4001 } }');
    expect(script).toContain('oifname { "eth0" } meta l4proto { tcp, udp } meta priority set ip daddr . th dport map @down4');
    // The small packets' rule comes after: it overrides the bulk leaf.
    expect(script.indexOf('meta length < 128 meta priority set ip daddr . th dport map @small4')).toBeGreaterThan(
      script.indexOf('map @down4'),
    );
    expect(script.startsWith('table inet svc_shape {}\ndelete table inet svc_shape\n')).toBe(true);
    expect(
      nftElementScript([{ tuple: { host: '2001:db8:0:0:0:0:0:1', port: 443 }, minor: 2 }], [{ host: '198.51.100.7', port: 50000 }]),
    ).toBe(
      [
        'delete element inet svc_shape down4 { 198.51.100.7 . 50000 }',
        'delete element inet svc_shape small4 { 198.51.100.7 . 50000 }',
        'add element inet svc_shape down6 { 2001:db8:0:0:0:0:0:1 . 443 : 5c00:8002 }',
        'add element inet svc_shape small6 { 2001:db8:0:0:0:0:0:1 . 443 : 5c00:4002 }',
        '',
      ].join('\n'),
    );
  });

  it('an upload filter matches the client address and source port in the bucket of the port low byte; on the IFB two, small packets first, each to its leaf', () => {
    const t = { host: '198.51.100.7', port: 0x1234 };
    const h = { v6: false, bucket: 0x34, node: 3 };
    expect(ingressFilterLine('eth0', 'svcup2', t, h)).toBe(
      'filter add dev eth0 parent ffff: prio 1476 handle 5c:34:3 protocol ip u32 ht 5c:34: match ip src 198.51.100.7/32 match ip sport 4660 0xffff action mirred egress redirect dev svcup2',
    );
    expect(ifbFilterLines('svcup2', t, h, 0x12)).toEqual([
      'filter add dev svcup2 parent 5c00: prio 1476 handle 5c:34:5 protocol ip u32 ht 5c:34: match ip src 198.51.100.7/32 match ip sport 4660 0xffff match u16 0 0xff80 at 2 classid 5c00:4012',
      'filter add dev svcup2 parent 5c00: prio 1476 handle 5c:34:6 protocol ip u32 ht 5c:34: match ip src 198.51.100.7/32 match ip sport 4660 0xffff classid 5c00:8012',
    ]);
    expect(ifbFilterLines('svcup2', { host: '2001:db8:0:0:0:0:0:1', port: 443 }, { v6: true, bucket: 0xbb, node: 1 }, 1)[0]).toContain(
      'handle 5d:bb:1 protocol ipv6 u32 ht 5d:bb: match ip6 src 2001:db8:0:0:0:0:0:1/128 match ip6 sport 443 0xffff match u16 0 0xff80 at 4 classid 5c00:4001',
    );
  });
});

describe('Shaper passes', () => {
  it('shapes the default route device; nothing is installed while the desired state caps nobody; a cap sets up the roots, the IFB and the table before any capped connection, with no class or filter', async () => {
    const k = fakeKernel();
    const shaper = new Shaper({ run: k.run, capability: noCapCheck });
    expect(await shaper.probe()).toEqual({ speedCaps: true, error: '', devices: ['eth0', 'svcup2'] });
    const conns = new Map([['free@svc', [{ host: '198.51.100.7', port: 50000 }]]]);
    shaper.setLimits([capLimits('free', 0, 0)]);
    await shaper.apply(conns);
    expect(k.writes()).toEqual([]);
    shaper.setLimits([capLimits('free', 0, 0), capLimits('capped', 0, 1_000_000)]);
    await shaper.apply(conns);
    const w = k.writes();
    expect(w.find((c) => c.cmd === 'ip -batch -')?.input).toBe('link add svcup2 txqueuelen 1000 type ifb\nlink set svcup2 up\n');
    const tc = w.find((c) => c.cmd === 'tc -batch -')?.input ?? '';
    expect(tc).toContain('qdisc replace dev eth0 root handle 5c00: htb default 0\n');
    expect(tc).not.toContain('class');
    expect(tc).not.toContain('mirred');
    expect(w.filter((c) => c.cmd === 'nft -f -').at(-1)?.input).toContain('map down4 { type ipv4_addr . inet_service : classid;  }');
  });

  it('a capped user: IFB, roots, hash tables, the class on both sides, the filters and the map element in one pass; the same pass again sends nothing', async () => {
    const k = fakeKernel();
    const shaper = new Shaper({ devices: ['eth0'], run: k.run, capability: noCapCheck });
    shaper.setLimits([capLimits('capped', 2_000_000, 1_000_000)]);
    const conns = new Map([
      ['capped@svc', [{ host: '::ffff:198.51.100.7', port: 50001 }]],
      ['other@svc', [{ host: '198.51.100.7', port: 50002 }]],
    ]);
    await shaper.apply(conns);
    const w = k.writes();
    const ip = w.find((c) => c.cmd === 'ip -batch -')?.input ?? '';
    expect(ip).toBe('link add svcup2 txqueuelen 1000 type ifb\nlink set svcup2 up\n');
    const tc = w.find((c) => c.cmd === 'tc -batch -')?.input ?? '';
    expect(tc).toContain('qdisc replace dev eth0 root handle 5c00: htb default 0\n');
    expect(tc).toContain('qdisc add dev eth0 handle ffff: ingress\n');
    expect(tc).toContain('class replace dev eth0 parent 5c00: classid 5c00:1 htb rate 1000000bit');
    expect(tc).toContain('class replace dev svcup2 parent 5c00: classid 5c00:1 htb rate 2000000bit');
    expect(tc).toContain('match ip src 198.51.100.7/32 match ip sport 50001 0xffff action mirred egress redirect dev svcup2');
    expect(tc).toContain('match ip src 198.51.100.7/32 match ip sport 50001 0xffff classid 5c00:8001');
    expect(tc).toContain('match ip src 198.51.100.7/32 match ip sport 50001 0xffff match u16 0 0xff80 at 2 classid 5c00:4001');
    expect(tc).not.toContain('50002');
    const nft = w.find((c) => c.cmd === 'nft -f -' && c.input.includes('map down4'))?.input ?? '';
    expect(nft).toContain('elements = { 198.51.100.7 . 50001 : 5c00:8001 }');
    expect(nft).toContain('elements = { 198.51.100.7 . 50001 : 5c00:4001 }');
    expect(nft).not.toContain('50002');
    const before = k.calls.length;
    await shaper.apply(conns);
    expect(k.calls.length).toBe(before);
  });

  it('a closed connection, a new one and a lifted cap change only their filters, elements and classes', async () => {
    const k = fakeKernel();
    const shaper = new Shaper({ devices: ['eth0'], run: k.run, capability: noCapCheck });
    shaper.setLimits([capLimits('a', 1_000_000, 1_000_000), capLimits('b', 0, 3_000_000)]);
    await shaper.apply(
      new Map([
        ['a@svc', [{ host: '198.51.100.7', port: 50001 }]],
        ['b@svc', [{ host: '198.51.100.8', port: 50002 }]],
      ]),
    );
    const before = k.calls.length;
    shaper.setLimits([capLimits('a', 1_000_000, 1_000_000)]);
    await shaper.apply(
      new Map([
        ['a@svc', [{ host: '198.51.100.7', port: 50003 }]],
        ['b@svc', [{ host: '198.51.100.8', port: 50002 }]],
      ]),
    );
    const later = k.calls.slice(before).filter((c) => c.input !== '');
    expect(later.map((c) => c.cmd)).toEqual(['tc -batch -', 'nft -f -', 'tc -batch -']);
    const [tc, nft, classDel] = later.map((c) => c.input) as [string, string, string];
    expect(tc).toContain('filter del dev eth0 parent ffff: prio 1476 handle 5c:51:1 protocol ip u32\n');
    expect(tc).toContain('filter del dev svcup2 parent 5c00: prio 1476 handle 5c:51:1 protocol ip u32\n');
    expect(tc).toContain('filter del dev svcup2 parent 5c00: prio 1476 handle 5c:51:2 protocol ip u32\n');
    expect(tc).toContain('match ip sport 50003 0xffff action mirred');
    expect(tc).not.toContain('class replace');
    expect(nft).toBe(
      [
        'delete element inet svc_shape down4 { 198.51.100.7 . 50001 }',
        'delete element inet svc_shape small4 { 198.51.100.7 . 50001 }',
        'delete element inet svc_shape down4 { 198.51.100.8 . 50002 }',
        'delete element inet svc_shape small4 { 198.51.100.8 . 50002 }',
        'add element inet svc_shape down4 { 198.51.100.7 . 50003 : 5c00:8001 }',
        'add element inet svc_shape small4 { 198.51.100.7 . 50003 : 5c00:4001 }',
        '',
      ].join('\n'),
    );
    expect(classDel).toBe(
      ['class del dev eth0 classid 5c00:4002', 'class del dev eth0 classid 5c00:8002', 'class del dev eth0 classid 5c00:2', ''].join('\n'),
    );
  });

  it('a node that cannot shape says why and installs nothing', async () => {
    const noNft = fakeKernel({ 'nft --version': { code: 127, stderr: 'nft: not found' } });
    const a = new Shaper({ devices: ['eth0'], run: noNft.run, capability: noCapCheck });
    expect(await a.probe()).toEqual({ speedCaps: false, error: 'nft is not usable (nft: not found; install nftables)', devices: [] });
    const noCap = new Shaper({
      devices: ['eth0'],
      run: fakeKernel().run,
      capability: async () => 'the agent lacks CAP_NET_ADMIN (needed for tc and nft)',
    });
    expect((await noCap.probe()).error).toBe('the agent lacks CAP_NET_ADMIN (needed for tc and nft)');
    const noIfb = fakeKernel({ [`ip link add svcp${process.pid}`]: { code: 2, stderr: 'Error: Unknown device type.' } });
    const c = new Shaper({ devices: ['eth0'], run: noIfb.run, capability: noCapCheck });
    expect((await c.probe()).error).toBe('the kernel cannot make an IFB device (CONFIG_IFB): Error: Unknown device type.');
    const foreign = fakeKernel({ 'tc qdisc show dev eth0 root': { code: 0, stdout: 'qdisc cake 8001: root refcnt 2\n' } });
    const d = new Shaper({ devices: ['eth0'], run: foreign.run, capability: noCapCheck });
    expect((await d.probe()).error).toBe('device eth0 has a root qdisc of its own (cake 8001:); speed caps would replace it');
    const missing = new Shaper({ devices: ['wg9'], run: fakeKernel().run, capability: noCapCheck });
    expect((await missing.probe()).error).toBe('device wg9 does not exist');
    const noIp: Runner = async (bin, args, input) => {
      if (bin === 'ip') throw Object.assign(new Error('spawn ip ENOENT'), { code: 'ENOENT' });
      return fakeKernel().run(bin, args, input);
    };
    const e = new Shaper({ devices: ['eth0'], run: noIp, capability: noCapCheck });
    expect(await e.probe()).toEqual({ speedCaps: false, error: 'ip is not usable (ENOENT; install iproute2)', devices: [] });
    d.setLimits([capLimits('a', 1, 1)]);
    await d.apply(new Map([['a@svc', [{ host: '198.51.100.7', port: 1 }]]]));
    expect(foreign.writes()).toEqual([]);
  });

  it('a failed pass makes the next one rebuild from nothing', async () => {
    let fail = true;
    const k = fakeKernel();
    const run: Runner = async (bin, args, input) => {
      if (bin === 'nft' && args[0] === '-f' && input?.includes('map down4') && !input.includes('probe') && fail) {
        fail = false;
        return { code: 1, stdout: '', stderr: 'Error: Could not process rule' };
      }
      return k.run(bin, args, input);
    };
    const shaper = new Shaper({ devices: ['eth0'], run, capability: noCapCheck });
    shaper.setLimits([capLimits('a', 0, 1_000_000)]);
    const conns = new Map([['a@svc', [{ host: '198.51.100.7', port: 50001 }]]]);
    await shaper.apply(conns);
    const before = k.calls.length;
    await shaper.apply(conns);
    const again = k.calls.slice(before);
    expect(again.some((c) => c.cmd === 'tc qdisc show dev eth0 root')).toBe(true);
    expect(again.find((c) => c.cmd === 'nft -f -' && c.input.includes('elements'))?.input).toContain('198.51.100.7 . 50001 : 5c00:8001');
  });
});
