import { describe, expect, it } from 'vitest';
import {
  controlPlaneAgentDefinition,
  type DesiredState,
  decodeFlat,
  encodeFlat,
  type InboundUser,
  Protocol,
  ServerMessage,
  ServerMessageDecoder,
  type UserLimits,
} from './index.ts';

// The agent decodes every Sync message with ServerMessageDecoder: it must give exactly the
// generated decoder's message (decodeFlat), whatever changed since the message before, and take
// the members whose bytes did not change from that message (the same objects).

function user(k: number, salt = ''): InboundUser {
  return {
    email: `sub_${String(k).padStart(6, '0')}@svc`,
    vless: { id: `00000000-0000-4000-8000-${String(k).padStart(12, '0')}${salt}`, flow: '' },
  };
}

function limits(k: number, sliceBytes = 1_000_000n): UserLimits {
  return {
    subscriptionId: `sub_${String(k).padStart(6, '0')}`,
    deviceLimit: k % 3,
    uploadBps: 0n,
    downloadBps: BigInt(k % 5) * 1000n,
    notAfterMs: 1_800_000_000_000n + BigInt(k),
    sliceId: BigInt(k),
    sliceBytes,
  };
}

interface Shape {
  inbounds: { tag: string; users: InboundUser[] }[];
  limits: UserLimits[];
  revision?: bigint;
}

function desired({ inbounds, limits: userLimits, revision = 7n }: Shape): ServerMessage {
  const state: DesiredState = {
    revision,
    config: {
      xray: {
        inbounds: inbounds.map((i, n) => ({
          tag: i.tag,
          protocol: Protocol.VLESS,
          port: 443 + n,
          listen: '0.0.0.0',
          stream: undefined,
          users: i.users,
        })),
        outbounds: [],
        routingRules: [],
      },
      certificates: [],
      userLimits,
    },
  } as unknown as DesiredState;
  return { desiredState: state } as ServerMessage;
}

const bytesOf = (m: ServerMessage) => encodeFlat(ServerMessage, ServerMessage.fromPartial(m));
const range = (from: number, to: number) => Array.from({ length: to - from }, (_, k) => from + k);

function base(): Shape {
  return {
    inbounds: [
      { tag: 'vless-tcp', users: range(0, 2000).map((k) => user(k)) },
      { tag: 'vless-ws', users: range(0, 2000).map((k) => user(k)) },
    ],
    limits: range(0, 2000).map((k) => limits(k)),
  };
}

/** Decodes with the decoder and checks the message is decodeFlat's; returns it. */
function check(decoder: ServerMessageDecoder, bytes: Uint8Array): ServerMessage {
  const got = decoder.decode(bytes);
  expect(got).toEqual(decodeFlat(ServerMessage, bytes));
  return got;
}

const usersOf = (m: ServerMessage, i: number) => m.desiredState?.config?.xray?.inbounds[i]?.users ?? [];
const limitsOf = (m: ServerMessage) => m.desiredState?.config?.userLimits ?? [];

describe('ServerMessageDecoder (the agent’s decoder of Sync’s messages)', () => {
  it('a big DesiredState decodes to the generated decoder’s message, every member decoded the first time', () => {
    const decoder = new ServerMessageDecoder(0);
    check(decoder, bytesOf(desired(base())));
    expect(decoder.last).toEqual({ reused: 0, decoded: 6000 });
  });

  it('unchanged members are the objects of the message before; a changed, inserted or removed one is decoded', () => {
    const decoder = new ServerMessageDecoder(0);
    const shape = base();
    let before = check(decoder, bytesOf(desired(shape)));

    const steps: [string, (s: Shape) => void, number][] = [
      [
        'one user’s credential changed in the middle',
        (s) => {
          s.inbounds[0]!.users[1000] = user(1000, 'x');
        },
        1,
      ],
      ['one user inserted at the start', (s) => s.inbounds[1]!.users.unshift(user(99_999)), 1],
      ['one user removed at the end', (s) => s.inbounds[0]!.users.pop(), 0],
      [
        'one user removed in the middle of both inbounds',
        (s) => {
          for (const i of s.inbounds) i.users.splice(500, 1);
        },
        0,
      ],
      [
        'a limit changed',
        (s) => {
          s.limits[1500] = limits(1500, 5n);
        },
        1,
      ],
      [
        'a limit inserted and another removed',
        (s) => {
          s.limits.splice(10, 0, limits(50_000));
          s.limits.splice(1900, 1);
        },
        1,
      ],
      [
        'one user of each list changed at the very first place',
        (s) => {
          for (const i of s.inbounds) i.users[0] = user(0, 'y');
        },
        2,
      ],
      ['the same message again', () => {}, 0],
      [
        'a revision only',
        (s) => {
          s.revision = 8n;
        },
        0,
      ],
    ];
    for (const [, change, decoded] of steps) {
      change(shape);
      const got = check(decoder, bytesOf(desired(shape)));
      expect(decoder.last.decoded).toBe(decoded);
      // Every member equal to a member of the message before at its place is that very object.
      for (let i = 0; i < 2; i++) {
        const prev = new Map(usersOf(before, i).map((u) => [JSON.stringify(u), u]));
        for (const u of usersOf(got, i)) {
          const was = prev.get(JSON.stringify(u));
          if (was && u !== was) expect.fail(`${u.email} decoded again though its bytes did not change`);
        }
      }
      expect(decoder.last.reused + decoder.last.decoded).toBe(usersOf(got, 0).length + usersOf(got, 1).length + limitsOf(got).length);
      before = got;
    }
  });

  it('many scattered changes, a reordering, an inbound added and one removed: still exactly the generated message', () => {
    const decoder = new ServerMessageDecoder(0);
    const shape = base();
    check(decoder, bytesOf(desired(shape)));
    for (let k = 0; k < 2000; k += 37) shape.inbounds[0]!.users[k] = user(k, 'z');
    shape.inbounds[1]!.users.splice(300, 200);
    shape.inbounds[1]!.users.splice(1200, 0, ...range(70_000, 70_300).map((k) => user(k)));
    check(decoder, bytesOf(desired(shape)));
    // The 55 scattered changes are found one by one (the rest of that list is reused); after the
    // block of 200 removed the walk loses its way and decodes up to the unchanged tail.
    expect(decoder.last.decoded).toBeGreaterThanOrEqual(55 + 300);
    expect(decoder.last.decoded).toBeLessThan(55 + 1500);
    expect(decoder.last.reused).toBeGreaterThan(2000 + 2000 - 55 + 300);

    shape.inbounds[0]!.users.reverse();
    check(decoder, bytesOf(desired(shape)));
    shape.inbounds.push({ tag: 'vless-grpc', users: range(0, 100).map((k) => user(k)) });
    check(decoder, bytesOf(desired(shape)));
    shape.inbounds.shift();
    check(decoder, bytesOf(desired(shape)));
    shape.limits = [];
    check(decoder, bytesOf(desired(shape)));
  });

  it('other messages in between leave what is kept; a small DesiredState is decoded whole and drops it', () => {
    const decoder = new ServerMessageDecoder(10_000);
    const shape = base();
    check(decoder, bytesOf(desired(shape)));
    check(decoder, bytesOf({ usageAck: { reportId: 5n } } as ServerMessage));
    check(decoder, bytesOf({ clock: { nowMs: 5n } } as ServerMessage));
    check(decoder, bytesOf(desired(shape)));
    expect(decoder.last).toEqual({ reused: 6000, decoded: 0 });

    check(decoder, bytesOf(desired({ inbounds: [{ tag: 'a', users: [user(1)] }], limits: [] })));
    expect(decoder.last).toEqual({ reused: 0, decoded: 0 });
    check(decoder, bytesOf(desired(shape)));
    expect(decoder.last).toEqual({ reused: 0, decoded: 6000 });
  });

  it('a message on the path given twice (protobuf’s concatenation) is decoded whole, as generated', () => {
    const decoder = new ServerMessageDecoder(0);
    const one = bytesOf(desired(base()));
    const other = base();
    other.inbounds[0]!.users.length = 10;
    const twice = Buffer.concat([one, bytesOf(desired(other))]);
    check(decoder, twice);
    expect(decoder.last).toEqual({ reused: 0, decoded: 0 });
    // Nothing of it was kept: the next message decodes every member.
    check(decoder, one);
    expect(decoder.last.reused).toBe(0);
  });

  it('the agent’s client definition decodes Sync’s messages with the decoder it is given', () => {
    const decoder = new ServerMessageDecoder(0);
    const decode = controlPlaneAgentDefinition(decoder).methods.sync.responseType.decode;
    const bytes = bytesOf(desired(base()));
    expect(decode(bytes)).toEqual(decodeFlat(ServerMessage, bytes));
    expect(decode(bytes)).toEqual(decodeFlat(ServerMessage, bytes));
    expect(decoder.last).toEqual({ reused: 6000, decoded: 0 });
  });

  it('broken messages (cut short, a length or a tag flipped) fail or decode as generated, and the next good one is right', () => {
    const decoder = new ServerMessageDecoder(0);
    const shape = { inbounds: [{ tag: 'vless-tcp', users: range(0, 20).map((k) => user(k)) }], limits: range(0, 20).map((k) => limits(k)) };
    const good = bytesOf(desired(shape));
    const outcome = (f: () => unknown) => {
      try {
        return { ok: f() };
      } catch (err) {
        return { error: (err as Error).constructor.name };
      }
    };
    const broken = [
      ...range(0, good.length).map((k) => good.subarray(0, k)),
      ...range(0, good.length).map((k) => Uint8Array.from(good, (b, j) => (j === k ? b ^ 0x80 : b))),
      ...range(0, good.length).map((k) => Uint8Array.from(good, (b, j) => (j === k ? (b + 1) & 0xff : b))),
    ];
    for (const input of broken) {
      check(decoder, good);
      expect(
        JSON.stringify(
          outcome(() => decoder.decode(input)),
          replacer,
        ),
      ).toBe(
        JSON.stringify(
          outcome(() => decodeFlat(ServerMessage, input)),
          replacer,
        ),
      );
    }
    check(decoder, good);
  });
});

const replacer = (_: string, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v);
