import {
  CreateWebhookInput,
  createWebhook,
  getWebhook,
  listWebhookDeliveries,
  listWebhooks,
  mayReadLinks,
  mayReadWebhookSecrets,
  parseInput,
  SYSTEM,
  testWebhook,
  WEBHOOK_ERROR_HIDDEN,
} from '@svc/domain';
import { createDomainTestbed, type DomainTestbed } from '@svc/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// Issue 29 item 6: a webhook's URL often carries the receiver's token in its query, and a
// failed delivery keeps an excerpt of what the receiver answered. Viewers read neither: the
// URL as the audit log keeps it, the status without the words; the rule of subscription links.

let bed: DomainTestbed;
beforeAll(async () => {
  bed = await createDomainTestbed();
});
afterAll(() => bed.close());

const admin = (role: 'owner' | 'admin' | 'viewer') => ({ type: 'admin' as const, id: 'adm_00000000000000000000000001', role });
const URL_WITH_TOKEN = 'https://hooks.example.com/in/svc?token=s3cr3t-receiver-token&tenant=7';

async function endpointWithFailedDeliveries() {
  const hook = await createWebhook(bed.ctx(admin('owner')), parseInput(CreateWebhookInput, { url: URL_WITH_TOKEN }));
  const answered = await testWebhook(bed.ctx(admin('owner')), hook.id);
  const unanswered = await testWebhook(bed.ctx(admin('owner')), hook.id);
  // What deliverWebhook writes after a refused attempt and after one that never got an answer
  // (the attempts themselves, over HTTP, are apps/worker/test/webhooks.test.ts).
  await bed.deps.db
    .updateTable('webhook_deliveries')
    .set({ attempts: 1, last_response_status: 401, last_error: 'HTTP 401: bad token s3cr3t-receiver-token for tenant 7' })
    .where('id', '=', answered.id)
    .execute();
  await bed.deps.db
    .updateTable('webhook_deliveries')
    .set({ attempts: 1, last_response_status: null, last_error: 'fetch failed: connect ECONNREFUSED 10.0.0.5:8443' })
    .where('id', '=', unanswered.id)
    .execute();
  return { hook, answered: answered.id, unanswered: unanswered.id };
}

describe('what a viewer reads of a webhook', () => {
  it('the same people as subscription links read webhook secrets: owners, admins, the shell; not viewers', () => {
    for (const actor of [admin('owner'), admin('admin'), admin('viewer'), SYSTEM, { type: 'anonymous' as const, id: null }])
      expect(mayReadWebhookSecrets(actor), JSON.stringify(actor)).toBe(mayReadLinks(actor));
    expect(mayReadWebhookSecrets(admin('viewer'))).toBe(false);
  });

  it('a viewer gets the URL the audit log keeps (no query token) in the list and the read; owners and admins get it whole', async () => {
    const { hook } = await endpointWithFailedDeliveries();
    const asViewer = bed.ctx(admin('viewer'));
    const viewerRead = await getWebhook(asViewer, hook.id);
    expect(viewerRead.url).toBe('https://hooks.example.com/in/svc?…');
    const listed = (await listWebhooks(asViewer, { limit: 200 })).items.find((w) => w.id === hook.id);
    expect(listed?.url).toBe('https://hooks.example.com/in/svc?…');
    for (const role of ['owner', 'admin'] as const) {
      const read = await getWebhook(bed.ctx(admin(role)), hook.id);
      expect(read.url).toBe(URL_WITH_TOKEN);
      expect(read).toEqual({ ...viewerRead, url: URL_WITH_TOKEN });
      expect((await listWebhooks(bed.ctx(admin(role)), { limit: 200 })).items.find((w) => w.id === hook.id)?.url).toBe(URL_WITH_TOKEN);
    }
  });

  it("a viewer's delivery log has the answer's status but not the receiver's words, nor connection detail; owners and admins read them", async () => {
    const { hook, answered, unanswered } = await endpointWithFailedDeliveries();
    const byId = async (role: 'owner' | 'admin' | 'viewer') =>
      new Map((await listWebhookDeliveries(bed.ctx(admin(role)), hook.id, { limit: 50 })).items.map((d) => [d.id, d]));
    const viewer = await byId('viewer');
    expect(viewer.get(answered)).toMatchObject({ last_response_status: 401, last_error: 'HTTP 401' });
    expect(viewer.get(unanswered)).toMatchObject({ last_response_status: null, last_error: WEBHOOK_ERROR_HIDDEN });
    expect(JSON.stringify([...viewer.values()])).not.toMatch(/s3cr3t|10\.0\.0\.5|8443|ECONNREFUSED/);
    for (const role of ['owner', 'admin'] as const) {
      const full = await byId(role);
      expect(full.get(answered)?.last_error).toBe('HTTP 401: bad token s3cr3t-receiver-token for tenant 7');
      expect(full.get(unanswered)?.last_error).toBe('fetch failed: connect ECONNREFUSED 10.0.0.5:8443');
      // Everything else reads the same.
      expect({ ...full.get(answered), last_error: null }).toEqual({ ...viewer.get(answered), last_error: null });
    }
  });

  it('a delivery that has not failed reads the same to everyone (last_error null)', async () => {
    const hook = await createWebhook(bed.ctx(admin('owner')), parseInput(CreateWebhookInput, { url: URL_WITH_TOKEN }));
    const pending = await testWebhook(bed.ctx(admin('admin')), hook.id);
    const [asViewer] = (await listWebhookDeliveries(bed.ctx(admin('viewer')), hook.id, { limit: 5 })).items;
    expect(asViewer).toEqual({ ...pending, last_error: null });
  });
});
