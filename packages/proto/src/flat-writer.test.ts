import { BinaryWriter } from '@bufbuild/protobuf/wire';
import { describe, expect, it } from 'vitest';
import { AgentMessage, encodeFlat, FlatWriter, LogSource, Network, Protocol, SecurityT, ServerMessage } from './index.ts';

// FlatWriter must produce exactly BinaryWriter's bytes: the agent decodes them with the
// generated decoder, and a revision's content must not depend on which writer sent it.

const STRINGS = [
  '',
  'a',
  'ascii only, forty-two characters long....',
  'x'.repeat(43),
  'y'.repeat(127),
  'z'.repeat(128),
  'long '.repeat(4000),
  'é',
  'naïve café — “quotes”',
  '日本語のテキスト',
  'emoji 🚀🔒 in the middle',
  '\ud800 lone surrogate',
  'trailing lone \udfff',
  `${'é'.repeat(42)}`,
  `${'€'.repeat(50)}`,
];

function same(codec: { encode(m: never, w?: BinaryWriter): BinaryWriter }, message: unknown): void {
  const expected = Buffer.from(codec.encode(message as never).finish());
  const actual = Buffer.from(encodeFlat(codec as never, message as never));
  expect(actual.equals(expected)).toBe(true);
}

function users(n: number, pad: string): ServerMessage {
  return ServerMessage.fromPartial({
    desiredState: {
      revision: 9_007_199_254_740_993n,
      config: {
        xray: {
          inbounds: [
            {
              tag: 'vless-reality',
              protocol: Protocol.VLESS,
              port: 443,
              stream: {
                network: Network.TCP,
                security: SecurityT.REALITY,
                reality: { dest: 'example.com:443', serverNames: ['example.com', 'www.example.com'] },
              },
              sniffing: { enabled: true, destOverride: ['http', 'tls'], routeOnly: false },
              users: Array.from({ length: n }, (_, i) => ({ email: `${i}${pad}@svc`, vless: { id: `id-${i}`, flow: 'xtls-rprx-vision' } })),
            },
            {
              tag: 'ws',
              protocol: Protocol.TROJAN,
              port: 8443,
              stream: { network: Network.WS, security: SecurityT.TLS, ws: { path: '/ws', headers: { Host: 'a.example', 'X-Ü': 'ü' } } },
              users: STRINGS.map((s, i) => ({ email: `${i}@svc`, trojan: { password: s } })),
            },
          ],
          outbounds: [{ tag: 'direct', protocol: Protocol.FREEDOM }],
          routingRules: [{ inboundTag: 'ws', outboundTag: 'direct', protocols: ['bittorrent'] }],
        },
        certificates: [{ id: 'c1', certPem: 'CERT'.repeat(1000), keyPem: 'KEY'.repeat(600) }],
      },
    },
  });
}

describe('FlatWriter encodes byte-identically to BinaryWriter', () => {
  it('DesiredStates whose nested lengths cross every varint width (1, 2, 3 and 4 bytes)', () => {
    for (const n of [0, 1, 2, 3, 50, 700, 30_000]) same(ServerMessage, users(n, ''));
    same(ServerMessage, users(3, 'p'.repeat(200)));
  });

  it('strings of every shape: empty, ASCII around the one-byte length limit, multi-byte UTF-8, surrogate pairs and lone surrogates', () => {
    for (const s of STRINGS) {
      same(ServerMessage, ServerMessage.fromPartial({ certIssued: { clientCertPem: s } }));
      expect(Buffer.from(new FlatWriter().string(s).finish()).equals(Buffer.from(new BinaryWriter().string(s).finish()))).toBe(true);
    }
  });

  it('every other scalar the agent sends: bool, double, int32, int64 (negative and beyond 2^53), enums, repeated messages', () => {
    same(
      AgentMessage,
      AgentMessage.fromPartial({
        status: {
          xrayRunning: true,
          cpuPercent: 12.5,
          memoryUsedBytes: 2n ** 62n,
          memoryTotalBytes: -1n,
          diskUsedBytes: 0n,
          diskTotalBytes: 123_456_789_012n,
          connections: 2_147_483_647,
          xrayUptimeSeconds: 86_400n,
        },
      }),
    );
    same(
      AgentMessage,
      AgentMessage.fromPartial({
        usage: {
          reportId: 18_446_744_073_709_551_615n >> 1n,
          entries: Array.from({ length: 300 }, (_, i) => ({
            subscriptionId: `sub_${i}`,
            uplinkBytes: BigInt(i) ** 5n,
            downlinkBytes: BigInt(i),
          })),
        },
      }),
    );
    same(
      AgentMessage,
      AgentMessage.fromPartial({
        logs: {
          commandId: 'cmd',
          eof: true,
          entries: STRINGS.map((line, i) => ({ timestampMs: BigInt(i), source: LogSource.XRAY, line })),
        },
      }),
    );
  });

  it('each writer method on its own, including the ones the generated code does not use today', () => {
    const pairs: Array<(w: BinaryWriter) => BinaryWriter> = [
      (w) => w.int32(-1),
      (w) => w.int32(-2_147_483_648),
      (w) => w.int32(2_147_483_647),
      (w) => w.uint32(0),
      (w) => w.uint32(127),
      (w) => w.uint32(128),
      (w) => w.uint32(16_384),
      (w) => w.uint32(4_294_967_295),
      (w) => w.sint32(-3),
      (w) => w.sint32(2_147_483_647),
      (w) => w.bool(false).bool(true),
      (w) => w.float(3.25).float(-0).float(Number.NaN),
      (w) => w.double(Math.PI).double(Number.NEGATIVE_INFINITY),
      (w) => w.fixed32(4_294_967_295).sfixed32(-5),
      (w) => w.int64(-9_223_372_036_854_775_808n).uint64(18_446_744_073_709_551_615n).sint64(-1n),
      (w) => w.fixed64(1n).sfixed64(-1n),
      (w) => w.bytes(new Uint8Array([0, 1, 2, 255])).bytes(new Uint8Array(300).fill(7)),
      (w) => w.tag(5, 2).fork().uint32(1).fork().string('x'.repeat(200)).join().join(),
      (w) => w.raw(new Uint8Array([9, 8, 7])),
    ];
    for (const write of pairs) {
      expect(Buffer.from(write(new FlatWriter(8)).finish()).equals(Buffer.from(write(new BinaryWriter()).finish()))).toBe(true);
    }
  });

  it('64-bit varints written by FlatWriter itself (0 to 2^53) and those it hands to BinaryWriter, at every width and edge', () => {
    const edges = [0n, 1n, 127n, 128n, 16_383n, 16_384n, 2n ** 31n, 2n ** 32n - 1n, 2n ** 32n, 2n ** 35n, 2n ** 49n - 1n, 2n ** 49n];
    const big = [2n ** 52n - 1n, 2n ** 52n, 2n ** 53n - 1n, 2n ** 53n, 2n ** 56n, 2n ** 63n - 1n];
    const values: Array<string | number | bigint> = [
      ...edges,
      ...big,
      ...edges.map(Number),
      2 ** 53 - 1,
      -1n,
      -(2n ** 40n),
      -(2n ** 63n),
      -7,
      '123456789012345',
      '-5',
    ];
    for (const v of values) {
      for (const write of [
        (w: BinaryWriter) => w.int64(v),
        (w: BinaryWriter) => w.sint64(v),
        ...(BigInt(v) >= 0n ? [(w: BinaryWriter) => w.uint64(v)] : []),
      ]) {
        const expected = Buffer.from(write(new BinaryWriter()).finish());
        expect(Buffer.from(write(new FlatWriter(8)).finish()).toString('hex'), `${typeof v} ${String(v)}`).toBe(expected.toString('hex'));
      }
    }
    expect(Buffer.from(new FlatWriter().uint64(2n ** 64n - 1n).finish())).toEqual(
      Buffer.from(new BinaryWriter().uint64(2n ** 64n - 1n).finish()),
    );
    // A UserLimits per user, every 64-bit field set (a node whose users all have limits).
    same(
      ServerMessage,
      ServerMessage.fromPartial({
        desiredState: {
          revision: 3n,
          config: {
            userLimits: Array.from({ length: 500 }, (_, i) => ({
              subscriptionId: `sub_${i}`,
              deviceLimit: i % 4,
              uploadBps: BigInt(i) * 125_000n,
              downloadBps: BigInt(i) ** 4n,
              notAfterMs: 1_790_000_000_000n + BigInt(i),
              sliceId: BigInt(i),
              sliceBytes: 2n ** BigInt(i % 60),
            })),
          },
        },
      }),
    );
  });

  it('refuses what BinaryWriter refuses: out-of-range integers, an unjoined fork', () => {
    expect(() => new FlatWriter().uint64(-1n)).toThrow();
    expect(() => new FlatWriter().int64(1.5)).toThrow();
    expect(() => new FlatWriter().uint32(-1)).toThrow(/uint32/);
    expect(() => new FlatWriter().int32(2 ** 31)).toThrow(/int32/);
    expect(() => new FlatWriter().uint32(1.5)).toThrow(/uint32/);
    expect(() => new FlatWriter().join()).toThrow(/fork/);
    expect(() => new FlatWriter().fork().finish()).toThrow(/fork/);
  });

  it('the decoder reads back what it wrote, and the writer is reusable after finish()', () => {
    const message = users(20, 'é');
    // Lone surrogates do not survive UTF-8 (they become U+FFFD) with either writer.
    const second = message.desiredState?.config?.xray?.inbounds[1];
    if (second) second.users = second.users.filter((u) => !/lone/.test(u.trojan?.password ?? ''));
    const w = new FlatWriter(16);
    const first = ServerMessage.encode(message, w).finish();
    const again = ServerMessage.encode(message, w).finish();
    expect(ServerMessage.decode(first)).toEqual(message);
    expect(Buffer.from(again).equals(Buffer.from(first))).toBe(true);
  });

  it('a big message handed over without a copy stays intact when the writer is used again', () => {
    const big = users(2_000, 'x');
    const other = users(1_500, 'y');
    const w = new FlatWriter(16);
    const first = ServerMessage.encode(big, w).finish();
    expect(first.byteLength).toBeGreaterThan(64 * 1024);
    const copy = Buffer.from(first);
    const second = ServerMessage.encode(other, w).finish();
    expect(Buffer.from(first).equals(copy)).toBe(true);
    expect(ServerMessage.decode(first)).toEqual(ServerMessage.decode(ServerMessage.encode(big).finish()));
    expect(ServerMessage.decode(second)).toEqual(ServerMessage.decode(ServerMessage.encode(other).finish()));
  });
});
