import { describe, expect, it } from 'vitest';
import { warmUpPushPath } from './warm-up.ts';

describe('warmUpPushPath: the gateway warm-up runs the push path over a made-up node', () => {
  it('compiles every member onto an inbound of each protocol, users in email order', async () => {
    const config = await warmUpPushPath(3_000);
    const inbounds = config.xray?.inbounds ?? [];
    expect(inbounds.map((i) => i.tag).sort()).toEqual(['warm-shadowsocks', 'warm-trojan', 'warm-vless', 'warm-vmess']);
    for (const i of inbounds) {
      expect(i.users).toHaveLength(3_000);
      const emails = i.users.map((u) => u.email);
      expect(emails).toEqual([...emails].sort());
    }
  });

  it('is the same config every time (nothing is kept between runs)', async () => {
    const a = await warmUpPushPath(500);
    const b = await warmUpPushPath(500);
    expect(b.xray?.inbounds.map((i) => i.users.length)).toEqual(a.xray?.inbounds.map((i) => i.users.length));
    expect(b.xray?.inbounds[0]?.users.slice(0, 3)).toEqual(a.xray?.inbounds[0]?.users.slice(0, 3));
  });
});
