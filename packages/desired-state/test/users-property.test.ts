import { XRAY_CAPABILITIES } from '@svc/domain';
import { describe, expect, it } from 'vitest';
import { compileNodeConfig } from '../src/compile.ts';
import type { ModelSubscription, NodeModel } from '../src/model.ts';
import { inbound, NOW, subscription } from './fixtures.ts';

/** Seeded PRNG (mulberry32): failures are reproducible from the printed seed. */
function rng(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const pick = <T>(r: () => number, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)] as T;

/**
 * The oracle, written from the words, not from the compiler: a subscription is a user
 * of an inbound iff an access group grants it that inbound, its stored status is active (not
 * disabled, not limited: a limit reached is stored) and not expired by the clock, and its client is active.
 */
function oracle(s: ModelSubscription, inboundId: string): boolean {
  if (!s.inbound_ids.includes(inboundId)) return false;
  if (s.status !== 'active' || s.client_status !== 'active') return false;
  if (s.expires_at && s.expires_at.getTime() <= NOW.getTime()) return false;
  return true;
}

describe('property: a user is on an inbound if and only if the rule says so (issue 5)', () => {
  it('holds for 300 random models', () => {
    for (let seed = 1; seed <= 300; seed++) {
      const r = rng(seed);
      const protocols = ['vless', 'vmess', 'trojan', 'shadowsocks'] as const;
      const inbounds = Array.from({ length: 1 + Math.floor(r() * 4) }, (_, k) =>
        inbound(
          `i${k}`,
          1000 + k,
          pick(r, protocols),
          { network: 'tcp', security: 'none', tcp: { accept_proxy_protocol: false } },
          {
            shadowsocks_method: 'aes-128-gcm',
          },
        ),
      );
      const subs = Array.from({ length: Math.floor(r() * 12) }, (_, n) =>
        subscription(
          n + 1,
          inbounds.filter(() => r() < 0.5).map((i) => i.id),
          {
            status: pick(r, ['active', 'active', 'active', 'limited', 'expired', 'disabled'] as const),
            client_status: pick(r, ['active', 'active', 'active', 'pending', 'disabled', 'rejected'] as const),
            expires_at: pick(r, [null, new Date(NOW.getTime() - 1), new Date(NOW.getTime()), new Date(NOW.getTime() + 1)]),
            traffic_limit_bytes: pick(r, [null, 0, 100, 1000]),
          },
        ),
      );
      const model: NodeModel = {
        node_id: 'n',
        revision: 1,
        now: NOW,
        engine: XRAY_CAPABILITIES,
        inbounds,
        subscriptions: subs,
        chains: [],
        certificates: [],
      };
      const config = compileNodeConfig(model);
      for (const i of inbounds) {
        const got = config.xray?.inbounds.find((x) => x.tag === i.tag)?.users.map((u) => u.email) ?? [];
        const want = subs
          .filter((s) => oracle(s, i.id))
          .map((s) => `${s.id}@svc`)
          .sort();
        expect(got, `seed ${seed}, inbound ${i.tag}`).toEqual(want);
      }
    }
  });
});
