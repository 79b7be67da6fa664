import { createHash } from 'node:crypto';
import { getSubscriptionLink, rotateSubscriptionCredentials } from '@svc/domain';
import { createDomainTestbed, type DomainTestbed, fixtures } from '@svc/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const BASE = 'https://panel.example.com';

let bed: DomainTestbed;
beforeAll(async () => {
  bed = await createDomainTestbed({ env: { SVC_PUBLIC_BASE_URL: BASE } });
});
afterAll(() => bed.close());

const sha256 = (v: string) => createHash('sha256').update(v).digest('hex');
const tokenOf = (link: string) => link.slice(`${BASE}/sub/`.length);
const row = (id: string) => bed.deps.db.selectFrom('subscriptions').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

describe('rotateSubscriptionCredentials', () => {
  it('re-issues uuids, passwords and the link token; the old token no longer matches any subscription', async () => {
    const sub = await fixtures(bed.ctx()).subscription();
    const before = await row(sub.id);
    bed.clock.advance(5000);
    const rotated = await rotateSubscriptionCredentials(bed.ctx(), sub.id);
    expect(rotated.credentials_rotated_at).toBe(bed.clock.now().toISOString());
    expect(rotated.link).not.toBe(sub.link);
    expect(rotated.link).toMatch(new RegExp(`^${BASE}/sub/[A-Za-z0-9_-]{43}$`));
    const after = await row(sub.id);
    for (const key of ['vless_uuid', 'vmess_uuid', 'trojan_password', 'shadowsocks_password', 'token_hash', 'token_enc'] as const) {
      expect(after[key], key).not.toBe(before[key]);
    }
    expect(after.token_hash).toBe(sha256(tokenOf(rotated.link)));
    const oldHash = sha256(tokenOf(sub.link));
    expect(await bed.deps.db.selectFrom('subscriptions').select('id').where('token_hash', '=', oldHash).execute()).toEqual([]);
    expect((await getSubscriptionLink(bed.ctx(), sub.id)).url).toBe(rotated.link);
    await expect(rotateSubscriptionCredentials(bed.ctx(), 'sub_doesnotexist')).rejects.toMatchObject({ type: 'not-found' });
  });
});
