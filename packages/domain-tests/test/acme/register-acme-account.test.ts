import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateAcmeAccountInput, createAcmeAccount, getAcmeAccount, parseInput, registerAcmeAccount } from '@svc/domain';
import { createDomainTestbed, type DomainTestbed } from '@svc/testkit';
import { type BindServer, bindAvailable, startBind } from '@svc/testkit/bind-server';
import { type PebbleServer, pebbleAvailable, startPebble } from '@svc/testkit/pebble-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// ACME accounts registered with a real CA (issue 16 item 1): Debian's pebble, trusted through the
// extra-CA setting (acme.extra_ca_file); one pebble with External Account Binding required.
const HAVE = bindAvailable() && pebbleAvailable();
const EAB_KID = 'kid-1';
const EAB_KEY = 'zWNDZM6eQGHWpSRTPal5eIUYFTu7EajVIoguysqZ9wG44nMEtx3MUAsUDkMTQ12W';
let bind: BindServer;
let pebble: PebbleServer;
let eabPebble: PebbleServer;
let bed: DomainTestbed;
beforeAll(async () => {
  if (!HAVE) return;
  bind = await startBind();
  pebble = await startPebble({ dnsPort: bind.port });
  eabPebble = await startPebble({ dnsPort: bind.port, eab: { [EAB_KID]: EAB_KEY } });
  const caFile = join(tmpdir(), `svc-acme-ca-${process.pid}.pem`);
  writeFileSync(caFile, `${pebble.caPem}\n${eabPebble.caPem}`);
  bed = await createDomainTestbed({ env: { SVC_ACME_EXTRA_CA_FILE: caFile } });
}, 60_000);
afterAll(async () => {
  await bed?.close();
  await eabPebble?.stop();
  await pebble?.stop();
  await bind?.stop();
});

const create = (input: Record<string, unknown>) => createAcmeAccount(bed.ctx(), parseInput(CreateAcmeAccountInput, input));
const rowOf = (id: string) => bed.deps.db.selectFrom('acme_accounts').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

describe.skipIf(!HAVE)('registering ACME accounts with their CA (pebble)', () => {
  it('registers with a sealed key; a second run is a no-op; the view shows registered, never the key or URL', async () => {
    const { id } = await create({ email: 'certs@example.com', directory_url: pebble.directoryUrl });
    const view = await registerAcmeAccount(bed.ctx(), id);
    expect(view).toMatchObject({ registered: true, registered_at: expect.any(String), registration_error: null });
    const row = await rowOf(id);
    expect(row.account_url).toMatch(/^https:\/\/localhost:\d+\/my-account\//);
    expect(row.account_key_enc).not.toContain('PRIVATE KEY');
    expect(bed.deps.secrets.open(row.account_key_enc as string)).toContain('BEGIN');
    expect(JSON.stringify(await getAcmeAccount(bed.ctx(), id))).not.toContain(row.account_url as string);
    expect(await registerAcmeAccount(bed.ctx(), id)).toEqual(view);
    const audit = await bed.deps.db.selectFrom('audit_log').select('action').where('entity_id', '=', id).execute();
    expect(audit.map((a) => a.action)).toEqual(['acme_account.created', 'acme_account.registered']);
  });

  it('a retry after the CA took the key finds the same account', async () => {
    const { id } = await create({ email: 'retry@example.com', directory_url: pebble.directoryUrl });
    await registerAcmeAccount(bed.ctx(), id);
    const first = (await rowOf(id)).account_url;
    // As if the first attempt's answer was lost: the key is kept, the URL is not.
    await bed.deps.db.updateTable('acme_accounts').set({ account_url: null, registered_at: null }).where('id', '=', id).execute();
    await registerAcmeAccount(bed.ctx(), id);
    expect((await rowOf(id)).account_url).toBe(first);
  });

  it('External Account Binding: without it the CA refuses and says why; with it the account is registered and the binding dropped', async () => {
    const without = await create({ email: 'eab@example.com', directory_url: eabPebble.directoryUrl });
    await expect(registerAcmeAccount(bed.ctx(), without.id)).rejects.toThrow();
    expect((await getAcmeAccount(bed.ctx(), without.id)).registration_error).toMatch(/externalAccountBinding|external account/i);
    const withEab = await create({
      email: 'eab2@example.com',
      directory_url: eabPebble.directoryUrl,
      external_account_binding: { kid: EAB_KID, hmac_key: EAB_KEY },
    });
    expect(JSON.stringify(withEab)).not.toContain(EAB_KEY);
    expect((await rowOf(withEab.id)).eab_enc).not.toContain(EAB_KEY);
    expect(await registerAcmeAccount(bed.ctx(), withEab.id)).toMatchObject({ registered: true });
    expect((await rowOf(withEab.id)).eab_enc).toBeNull();
  });

  it('a directory that cannot be reached is a registration error naming it as "not reachable" (no connection-level detail), nothing registered', async () => {
    const { id } = await create({ email: 'down@example.com', directory_url: 'https://127.0.0.1:9/dir' });
    await expect(registerAcmeAccount(bed.ctx(), id)).rejects.toMatchObject({ type: 'unavailable' });
    expect((await getAcmeAccount(bed.ctx(), id)).registration_error).toBe('the ACME CA (https://127.0.0.1:9/dir): not reachable');
    expect((await rowOf(id)).account_url).toBeNull();
  });
});
