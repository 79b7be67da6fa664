import {
  allowPrivateNetworks,
  type DomainContext,
  getOutboundSettings,
  OUTBOUND_SETTINGS_KEY,
  parseInput,
  TOPICS,
  UpdateOutboundSettingsInput,
  updateOutboundSettings,
} from '@svc/domain';
import { createDomainTestbed, type DomainTestbed, fixtures } from '@svc/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { actorOf, anOwner } from '../admins/an-owner.ts';
import { inputErrors, refusal } from '../support.ts';

// The owner's word on private networks as outbound destinations (issue 29.2; docs/threat-model.md,
// "Outbound calls"): off by default, changed by owners only, overridden by the configuration.
let bed: DomainTestbed;
let pinned: DomainTestbed;
let asOwner: DomainContext;
beforeAll(async () => {
  // '' unsets the testkit's default (which allows private networks for the stand-ins).
  bed = await createDomainTestbed({ env: { SVC_OUTBOUND_ALLOW_PRIVATE_NETWORKS: '' } });
  pinned = await createDomainTestbed({ env: { SVC_OUTBOUND_ALLOW_PRIVATE_NETWORKS: 'false' } });
  ({ asOwner } = await anOwner(bed));
});
afterAll(async () => {
  await bed?.close();
  await pinned?.close();
});

const allow = (ctx: DomainContext, value: boolean) =>
  updateOutboundSettings(ctx, parseInput(UpdateOutboundSettingsInput, { allow_private_networks: value }));

describe('outbound settings: private networks as destinations', () => {
  it('are refused by default, and the setting says it is the installation setting that decides', async () => {
    expect(await getOutboundSettings(bed.deps)).toEqual({ allow_private_networks: false, set_by: 'settings' });
    expect(await allowPrivateNetworks(bed.deps)).toBe(false);
  });

  it('the owner allows them: stored, audited with the value, announced on settings.changed; the policy reads it at once', async () => {
    expect(await allow(asOwner, true)).toEqual({ allow_private_networks: true, set_by: 'settings' });
    expect(await allowPrivateNetworks(bed.deps)).toBe(true);
    const entry = await bed.deps.db
      .selectFrom('audit_log')
      .selectAll()
      .where('entity_id', '=', OUTBOUND_SETTINGS_KEY)
      .orderBy('id', 'desc')
      .executeTakeFirstOrThrow();
    expect(entry).toMatchObject({ action: 'settings.updated', entity_type: 'settings', details: { allow_private_networks: true } });
    expect(bed.published(TOPICS.settingsChanged)).toContainEqual({ key: OUTBOUND_SETTINGS_KEY });
    // The same value again writes nothing.
    const before = await bed.deps.db.selectFrom('audit_log').select('id').where('entity_id', '=', OUTBOUND_SETTINGS_KEY).execute();
    await allow(asOwner, true);
    expect(await bed.deps.db.selectFrom('audit_log').select('id').where('entity_id', '=', OUTBOUND_SETTINGS_KEY).execute()).toHaveLength(
      before.length,
    );
    await allow(asOwner, false);
    expect(await allowPrivateNetworks(bed.deps)).toBe(false);
  });

  it('an admin or a viewer may not change it (installation settings are the owner’s); nothing is written', async () => {
    for (const role of ['admin', 'viewer'] as const) {
      const other = await fixtures(bed.ctx()).admin({ role });
      expect(await refusal(allow(bed.ctx(actorOf(other)), true))).toMatchObject({ type: 'forbidden' });
    }
    expect(await allowPrivateNetworks(bed.deps)).toBe(false);
  });

  it('the input is a boolean and nothing else', () => {
    expect(inputErrors(UpdateOutboundSettingsInput, { allow_private_networks: 'yes' })).toHaveProperty('allow_private_networks');
    expect(inputErrors(UpdateOutboundSettingsInput, { allow_loopback: true })).not.toEqual({});
  });

  it('the configuration (SVC_OUTBOUND_ALLOW_PRIVATE_NETWORKS) overrides the setting; changing the setting then is a conflict naming the variable', async () => {
    const owner = (await anOwner(pinned)).asOwner;
    expect(await getOutboundSettings(pinned.deps)).toEqual({ allow_private_networks: false, set_by: 'configuration' });
    const err = await refusal(allow(owner, true));
    expect(err).toMatchObject({ type: 'conflict', message: expect.stringContaining('SVC_OUTBOUND_ALLOW_PRIVATE_NETWORKS') });
    expect(await pinned.deps.db.selectFrom('settings').selectAll().where('key', '=', OUTBOUND_SETTINGS_KEY).execute()).toEqual([]);
    expect(await allowPrivateNetworks(pinned.deps)).toBe(false);
  });
});
