import { InboundUser, NodeConfig, Protocol } from '@svc/proto';
import { describe, expect, it } from 'vitest';
import { planChange, usersHash } from '../../src/apply/change-plan.ts';
import { Backoff, channelReconnectOptions, MAX_PUSHBACK_MS, pushbackDelay } from '../../src/backoff.ts';
import { ConnectionBook, parseAccessLine } from '../../src/connections/access-log.ts';
import { normalizeSha256, PinError, splitEndpoint } from '../../src/pin-ca.ts';

const vmess = (email: string, id = '11111111-1111-4111-8111-111111111111'): InboundUser =>
  InboundUser.fromPartial({ email, vmess: { id } });
const config = (users: InboundUser[], port = 443, extra: Partial<NodeConfig> = {}): NodeConfig =>
  NodeConfig.fromPartial({
    xray: {
      inbounds: [{ tag: 'in-1', protocol: Protocol.VMESS, port, users }],
      outbounds: [{ tag: 'direct', protocol: Protocol.FREEDOM }],
    },
    ...extra,
  });

describe('reconnect backoff: exponential from 1 s to 60 s with jitter (spec 7.1, 8)', () => {
  it('every delay is within 1-60 s, the ceiling doubles per attempt up to 60 s, and reset starts over', () => {
    const top = new Backoff(1000, 60_000, () => 1);
    expect(Array.from({ length: 9 }, () => top.next())).toEqual([1000, 2000, 4000, 8000, 16000, 32000, 60000, 60000, 60000]);
    top.reset();
    expect(top.next()).toBe(1000);
    const bottom = new Backoff(1000, 60_000, () => 0);
    expect(Array.from({ length: 9 }, () => bottom.next())).toEqual(Array(9).fill(1000));
  });

  it('jitter spreads a fleet: delays of the same attempt differ', () => {
    const seen = new Set<number>();
    for (let i = 0; i < 50; i++) {
      const b = new Backoff();
      for (let k = 0; k < 5; k++) b.next();
      seen.add(b.next());
    }
    expect(seen.size).toBeGreaterThan(10);
    for (const d of seen) expect(d).toBeGreaterThanOrEqual(1000);
    for (const d of seen) expect(d).toBeLessThanOrEqual(60_000);
  });
});

describe('the gateway’s retry hint (grpc-retry-pushback-ms, issue 17.3): the agent comes back when told, spread a little', () => {
  it('waits the hinted milliseconds plus up to a tenth more (at least a quarter second) of jitter', () => {
    expect(pushbackDelay('4000', () => 0)).toBe(4000);
    expect(pushbackDelay('4000', () => 1)).toBe(4400);
    expect(pushbackDelay('100', () => 1)).toBe(350);
  });

  it('a hint that is not a number of milliseconds is ignored (the backoff applies); a huge one is capped at 10 minutes', () => {
    for (const bad of [undefined, '', '-5', '1.5', 'soon', '99999999999']) expect(pushbackDelay(bad)).toBeNull();
    expect(pushbackDelay('999999999', () => 0)).toBe(MAX_PUSHBACK_MS);
  });
});

describe('the Sync channel’s reconnect schedule (issue 17.3): each agent draws its own first delay, so a fleet does not come back in waves', () => {
  it('the first delay is uniform in [1 s, 2 s), the ceiling stays 60 s', () => {
    expect(channelReconnectOptions(() => 0)).toEqual({
      'grpc.initial_reconnect_backoff_ms': 1000,
      'grpc.max_reconnect_backoff_ms': 60_000,
    });
    expect(channelReconnectOptions(() => 0.999)['grpc.initial_reconnect_backoff_ms']).toBe(1999);
    // The top of the draw stays under 2 s (rounding would reach it one draw in 2,000).
    expect(channelReconnectOptions(() => 0.99999)['grpc.initial_reconnect_backoff_ms']).toBe(1999);
    const drawn = new Set(Array.from({ length: 50 }, () => channelReconnectOptions()['grpc.initial_reconnect_backoff_ms']));
    for (const ms of drawn) expect(ms >= 1000 && ms < 2000).toBe(true);
    expect(drawn.size).toBeGreaterThan(10);
  });
});

describe('change plan: users of existing inbounds change without a restart, a reconnect that changes nothing restarts nothing', () => {
  it('the same configuration is "same" whatever the order of the users', () => {
    expect(planChange(config([vmess('a@svc'), vmess('b@svc')]), config([vmess('b@svc'), vmess('a@svc')]))).toEqual({ kind: 'same' });
    expect(usersHash([vmess('a@svc'), vmess('b@svc')])).toBe(usersHash([vmess('b@svc'), vmess('a@svc')]));
  });

  it('added, removed and changed users become per-inbound add/remove lists (a changed credential: remove, then add)', () => {
    const plan = planChange(
      config([vmess('a@svc'), vmess('b@svc'), vmess('c@svc')]),
      config([vmess('a@svc'), vmess('c@svc', '22222222-2222-4222-8222-222222222222'), vmess('d@svc')]),
    );
    expect(plan).toEqual({
      kind: 'users',
      changes: [{ tag: 'in-1', remove: ['b@svc', 'c@svc'], add: [vmess('c@svc', '22222222-2222-4222-8222-222222222222'), vmess('d@svc')] }],
    });
  });

  it('anything but users (a port, an outbound, a certificate) needs a restart', () => {
    expect(planChange(config([vmess('a@svc')]), config([vmess('a@svc')], 8443)).kind).toBe('restart');
    expect(planChange(config([]), config([], 443, { certificates: [{ id: 'c1', certPem: 'x', keyPem: 'y' }] })).kind).toBe('restart');
  });
});

describe('access log: who is connected from where (to end a removed user’s connections)', () => {
  it('reads v2ray 4 and Xray lines, IPv4 and IPv6', () => {
    expect(parseAccessLine('2026/11/24 13:53:02 127.0.0.1:33790 accepted tcp:127.0.0.1:37087 [direct] email: vmess-kept@svc')).toEqual({
      email: 'vmess-kept@svc',
      host: '127.0.0.1',
      port: 33790,
    });
    expect(
      parseAccessLine('2025/01/02 15:04:05.000000 from tcp:[2001:db8::1]:51234 accepted tcp:example.com:443 [in -> out] email: u@svc'),
    ).toEqual({
      email: 'u@svc',
      host: '2001:db8::1',
      port: 51234,
    });
  });

  it('ignores rejected lines, API lines and lines a client could shape into something else', () => {
    expect(parseAccessLine('2026/11/24 13:53:02 127.0.0.1:33776 rejected  v2ray.com/core/proxy/vmess: Not Found')).toBeNull();
    expect(parseAccessLine('2026/11/24 13:53:02 127.0.0.1:42776 accepted tcp:127.0.0.1:0 [api]')).toBeNull();
    expect(parseAccessLine('x accepted email: a@svc')).toBeNull();
    expect(parseAccessLine(`${'a:'.repeat(50_000)}1 accepted y email: z@svc`)).toBeNull();
  });

  it('the book keeps each user’s recent sources, bounded, and hands them out once', () => {
    const book = new ConnectionBook(2);
    for (const port of [1001, 1002, 1003]) book.see(`2026/11/24 13:53:02 10.0.0.1:${port} accepted tcp:x:80 [direct] email: a@svc`);
    expect(book.take('a@svc').map((e) => e.port)).toEqual([1002, 1003]);
    expect(book.take('a@svc')).toEqual([]);
  });
});

describe('enroll arguments', () => {
  it('--ca-sha256 takes 64 hex digits, with or without colons; --server takes HOST:PORT or [v6]:PORT', () => {
    expect(normalizeSha256('AB:'.repeat(31) + 'AB')).toBe('ab'.repeat(32));
    expect(() => normalizeSha256('abc')).toThrow(PinError);
    expect(splitEndpoint('cp.example.com:8443')).toEqual({ host: 'cp.example.com', port: 8443 });
    expect(splitEndpoint('[2001:db8::1]:8443')).toEqual({ host: '2001:db8::1', port: 8443 });
    expect(() => splitEndpoint('cp.example.com')).toThrow(PinError);
    expect(() => splitEndpoint('cp.example.com:70000')).toThrow(PinError);
  });
});
