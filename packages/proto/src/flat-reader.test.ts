import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  AgentMessage,
  ControlPlaneAgentDefinition,
  ControlPlaneDefinition,
  decodeFlat,
  InboundUser,
  ServerMessage,
  UserLimits,
} from './index.ts';

// FlatReader must give exactly the generated decoder's messages: the agent applies what it
// decodes, and the gateway credits usage by the emails it decodes. Text, malformed UTF-8 and
// broken messages included.

const TEXT = [
  '',
  'a',
  'sub_01JD8Y3K4W5X6Y7Z8A9B0C1D2E@svc',
  'naïve café — “quotes”',
  '日本語のテキスト',
  'emoji 🚀🔒 in the middle',
  '\ud800 lone surrogate',
  'trailing lone \udfff',
  '\ufeffstarts with a byte order mark',
  'a byte order mark \ufeff inside',
  '\ufeff',
  '\ufeff\ufeffdouble',
  'x'.repeat(70_000),
];

/** An InboundUser whose email is these raw bytes (any bytes, valid UTF-8 or not). */
function userWithEmailBytes(email: Uint8Array): Uint8Array {
  const head = Buffer.from([0x0a]);
  const len: number[] = [];
  let n = email.length;
  while (n > 0x7f) {
    len.push((n & 0x7f) | 0x80);
    n >>>= 7;
  }
  len.push(n);
  return Buffer.concat([head, Buffer.from(len), email]);
}

const MALFORMED = [
  [0xff],
  [0xc0, 0x80],
  [0xe0, 0x80, 0x80],
  [0xed, 0xa0, 0x80],
  [0xf4, 0x90, 0x80, 0x80],
  [0xe2, 0x82],
  [0xf0, 0x9f, 0x9a],
  [0x61, 0xf0, 0x9f, 0x62],
  [0xef, 0xbb],
  [0xef, 0xbb, 0xbf, 0xef, 0xbb, 0xbf],
  [0xef, 0xbb, 0xbf, 0xff],
  [0x80, 0x80, 0x80],
].map((b) => Uint8Array.from(b));

/** What a decode gives: the message, or the kind of error it threw. */
const outcome = (decode: () => unknown) => {
  try {
    return { ok: decode() };
  } catch (err) {
    return { threw: (err as Error).constructor.name };
  }
};

describe('FlatReader decodes what the generated decoder decodes', () => {
  it('every kind of text in a DesiredState and in a UsageReport (subscription ids)', () => {
    const state = ServerMessage.fromPartial({
      desiredState: {
        revision: 7n,
        config: { xray: { inbounds: [{ tag: TEXT[3], users: TEXT.map((email) => ({ email, trojan: { password: email } })) }] } },
      },
    });
    const bytes = ServerMessage.encode(state).finish();
    expect(decodeFlat(ServerMessage, bytes)).toEqual(ServerMessage.decode(bytes));
    expect(decodeFlat(ServerMessage, bytes).desiredState?.config?.xray?.inbounds[0]?.users.map((u) => u.email)).toEqual(
      ServerMessage.decode(bytes).desiredState?.config?.xray?.inbounds[0]?.users.map((u) => u.email),
    );
    const report = AgentMessage.fromPartial({
      usage: { reportId: 3n, entries: TEXT.map((id) => ({ subscriptionId: id, uplinkBytes: 1n })) },
    });
    const reportBytes = AgentMessage.encode(report).finish();
    expect(decodeFlat(AgentMessage, reportBytes)).toEqual(AgentMessage.decode(reportBytes));
  });

  it('malformed UTF-8 and byte order marks give the same text', () => {
    for (const email of MALFORMED) {
      const bytes = userWithEmailBytes(email);
      expect(decodeFlat(InboundUser, bytes).email, Buffer.from(email).toString('hex')).toBe(InboundUser.decode(bytes).email);
    }
  });

  it('broken and random bytes: both fail, or both give the same message', () => {
    const whole = ServerMessage.encode(
      ServerMessage.fromPartial({
        desiredState: { revision: 1n, config: { xray: { inbounds: [{ tag: 't', users: [{ email: 'e@svc', vless: { id: 'x' } }] }] } } },
      }),
    ).finish();
    const inputs = [
      ...Array.from({ length: whole.length }, (_, k) => whole.subarray(0, k)),
      ...Array.from({ length: 2_000 }, (_, k) => new Uint8Array(randomBytes(1 + (k % 64)))),
    ];
    for (const input of inputs)
      expect(
        outcome(() => decodeFlat(ServerMessage, input)),
        Buffer.from(input).toString('hex'),
      ).toEqual(outcome(() => ServerMessage.decode(input)));
  });

  it('64-bit integers of every varint length, negative and the largest, and cut short: the same values, the same failures', () => {
    const values = [0n, 1n, 127n, 128n, 2n ** 14n, 2n ** 21n - 1n, 2n ** 42n, 2n ** 49n - 1n, 2n ** 49n, 2n ** 53n + 1n, 2n ** 63n - 1n];
    const limits = [
      ...values.map((v) => ({ notAfterMs: v, sliceId: v, sliceBytes: v, uploadBps: v, downloadBps: v })),
      ...values.map((v) => ({ notAfterMs: -v - 1n, sliceId: 2n ** 64n - 1n - v })),
    ].map((l) => UserLimits.fromPartial({ subscriptionId: 's', ...l }));
    for (const l of limits) {
      const bytes = UserLimits.encode(l).finish();
      expect(
        decodeFlat(UserLimits, bytes),
        JSON.stringify(l, (_, v) => (typeof v === 'bigint' ? String(v) : v)),
      ).toEqual(UserLimits.decode(bytes));
      // Every prefix, and every varint's last byte turned into a continuation byte: both fail, or both give the same message.
      const broken = [
        ...Array.from({ length: bytes.length }, (_, k) => bytes.subarray(0, k)),
        ...Array.from({ length: bytes.length }, (_, k) => Uint8Array.from(bytes, (b, j) => (j === k && b < 0x80 ? b | 0x80 : b))),
      ];
      for (const input of broken) expect(outcome(() => decodeFlat(UserLimits, input))).toEqual(outcome(() => UserLimits.decode(input)));
    }
  });

  it('the agent’s client decodes Sync’s ServerMessages over it, and anything else as generated', () => {
    const bytes = ServerMessage.encode(ServerMessage.fromPartial({ usageAck: { reportId: 5n } })).finish();
    const decode = ControlPlaneAgentDefinition.methods.sync.responseType.decode;
    expect(decode(bytes)).toEqual(ServerMessage.decode(bytes));
    expect(ControlPlaneAgentDefinition.methods.enroll).toBe(ControlPlaneDefinition.methods.enroll);
    expect(ControlPlaneAgentDefinition.methods.sync.name).toBe(ControlPlaneDefinition.methods.sync.name);
    expect(ControlPlaneAgentDefinition.methods.sync.requestType).toBe(ControlPlaneDefinition.methods.sync.requestType);
  });
});
