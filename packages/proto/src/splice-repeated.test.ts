import { describe, expect, it } from 'vitest';
import { encodeFlat, FlatWriter } from './flat-writer.ts';
import { type Inbound, InboundUser, NodeConfig, ServerMessage, UserLimits } from './gen/svc/controlplane/v1/controlplane.ts';
import { spliceRepeated } from './splice-repeated.ts';

/** Each entry of a repeated field as the generated encoder writes it inside its container: tag, length, message. */
function entries<T>(field: number, codec: { encode(m: T, w: FlatWriter): unknown }, items: readonly T[]): Uint8Array[] {
  return items.map((item) => {
    const w = new FlatWriter();
    codec.encode(item, w.uint32(((field << 3) | 2) >>> 0).fork() as FlatWriter);
    w.join();
    return w.finish();
  });
}

const users = (n: number, tag: string): InboundUser[] =>
  Array.from({ length: n }, (_, k) => ({ email: `${tag}-${k}-${'x'.repeat(k % 50)}@svc`, vless: { id: `uuid-${k}`, flow: '' } }));

const inbound = (tag: string, u: InboundUser[]): Inbound => ({
  tag,
  protocol: 1,
  port: 443,
  listen: '',
  stream: { network: 1, security: 0 },
  sniffing: { enabled: true, destOverride: ['http'], routeOnly: false },
  users: u,
});

describe('spliceRepeated: encoded entries of repeated fields put into an encoded message', () => {
  it('gives the bytes of the generated encoder over the message with the entries in it (nested length prefixes growing past one byte)', () => {
    const full = {
      desiredState: {
        revision: 7n,
        config: {
          xray: {
            inbounds: [inbound('a', users(300, 'a')), inbound('b', []), inbound('c', users(2, 'c'))],
            outbounds: [],
            routingRules: [],
          },
          certificates: [{ id: 'crt', certPem: 'C', keyPem: 'K' }],
          userLimits: [
            { subscriptionId: 's', deviceLimit: 1, uploadBps: 0n, downloadBps: 0n, notAfterMs: 5n, sliceId: 2n, sliceBytes: 3n },
          ],
        },
      },
    } satisfies ServerMessage;
    const config = full.desiredState.config;
    const bare: ServerMessage = {
      desiredState: {
        revision: 7n,
        config: { ...config, xray: { ...config.xray, inbounds: config.xray.inbounds.map((i) => ({ ...i, users: [] })) }, userLimits: [] },
      },
    };
    const top = [
      [1, 0],
      [2, 0],
    ] as const;
    const spliced = spliceRepeated(encodeFlat(ServerMessage, bare), [
      { path: [...top, [1, 0], [1, 0]], field: 7, chunks: entries(7, InboundUser, config.xray.inbounds[0]?.users ?? []) },
      { path: [...top, [1, 0], [1, 2]], field: 7, chunks: entries(7, InboundUser, config.xray.inbounds[2]?.users ?? []) },
      { path: top, field: 11, chunks: entries(11, UserLimits, config.userLimits) },
    ]);
    expect(spliced.equals(Buffer.from(encodeFlat(ServerMessage, full)))).toBe(true);
  });

  it('puts the entries before the first field with a higher number, not at the end', () => {
    // NodeConfig: xray (1), certificates (10), user_limits (11): entries of 10 go before 11's.
    const limits = [{ subscriptionId: 's', deviceLimit: 0, uploadBps: 0n, downloadBps: 0n, notAfterMs: 0n, sliceId: 0n, sliceBytes: 0n }];
    const certificates = [
      { id: 'a', certPem: 'A', keyPem: 'a' },
      { id: 'b', certPem: 'B', keyPem: 'b' },
    ];
    const w = (m: NodeConfig) => encodeFlat(NodeConfig, m);
    const spliced = spliceRepeated(w({ xray: undefined, certificates: [], userLimits: limits }), [
      {
        path: [],
        field: 10,
        chunks: certificates.map((c) => {
          const f = new FlatWriter();
          NodeConfig.encode({ xray: undefined, certificates: [c], userLimits: [] }, f);
          return f.finish();
        }),
      },
    ]);
    expect(spliced.equals(Buffer.from(w({ xray: undefined, certificates, userLimits: limits })))).toBe(true);
  });

  it('refuses a path that is not in the message, and bytes that are not a message', () => {
    const bytes = encodeFlat(NodeConfig, { xray: undefined, certificates: [], userLimits: [] });
    expect(() => spliceRepeated(bytes, [{ path: [[1, 0]], field: 7, chunks: [] }])).toThrow(/not in the message/);
    expect(() => spliceRepeated(Uint8Array.from([0x0a, 0x05, 0x01]), [{ path: [], field: 11, chunks: [] }])).toThrow(/past the end/);
    expect(() => spliceRepeated(Uint8Array.from([0x0b]), [{ path: [], field: 11, chunks: [] }])).toThrow(/wire type 3/);
  });
});
