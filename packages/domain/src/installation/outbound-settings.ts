import { z } from 'zod';
import { assertActorIsOwner } from '../admins/actor-guard.ts';
import { ConflictError } from '../errors.ts';
import { TOPICS } from '../shared/bus.ts';
import type { DomainContext, DomainDeps } from '../shared/context.ts';
import { unitOfWork } from '../shared/unit-of-work.ts';

/**
 * The owner's word on where the server may connect when an admin names a destination
 * (docs/threat-model.md, "Outbound calls"): loopback and private networks are refused unless
 * allowed here (off by default); link-local and metadata addresses are refused whatever it says.
 * Stored under one key of `settings`; outbound.allow_private_networks in the configuration
 * (SVC_OUTBOUND_ALLOW_PRIVATE_NETWORKS), when set, overrides it.
 */
export const OUTBOUND_SETTINGS_KEY = 'outbound';

export const OutboundSettingsFields = z.object({
  allow_private_networks: z.boolean().meta({
    description:
      'Webhooks, ACME directories, DNS providers, OAuth and payment APIs may be reached at loopback and private addresses (127/8, 10/8, 172.16/12, 192.168/16, 100.64/10, fc00::/7, ::1). Link-local and cloud metadata addresses stay refused.',
  }),
});

export const UpdateOutboundSettingsInput = OutboundSettingsFields.partial().strict().brand<'UpdateOutboundSettingsInput'>();
export type UpdateOutboundSettingsInput = z.output<typeof UpdateOutboundSettingsInput>;

export interface OutboundSettingsView {
  allow_private_networks: boolean;
  /** Where the value in force comes from: this setting, or the configuration overriding it. */
  set_by: 'settings' | 'configuration';
}

type Reader = Pick<DomainDeps, 'db' | 'config'>;

async function stored(deps: Pick<DomainDeps, 'db'>): Promise<boolean> {
  const row = await deps.db.selectFrom('settings').select('value').where('key', '=', OUTBOUND_SETTINGS_KEY).executeTakeFirst();
  return (row?.value as { allow_private_networks?: unknown } | undefined)?.allow_private_networks === true;
}

export async function getOutboundSettings(deps: Reader): Promise<OutboundSettingsView> {
  const fixed = deps.config.outbound.allow_private_networks;
  if (fixed !== undefined) return { allow_private_networks: fixed, set_by: 'configuration' };
  return { allow_private_networks: await stored(deps), set_by: 'settings' };
}

/** The policy in force, read per call (the outbound client asks before each connection). */
export async function allowPrivateNetworks(deps: Reader): Promise<boolean> {
  return (await getOutboundSettings(deps)).allow_private_networks;
}

/** Owners only, audited; refused while the configuration overrides the setting (the change would do nothing). */
export async function updateOutboundSettings(ctx: DomainContext, patch: UpdateOutboundSettingsInput): Promise<OutboundSettingsView> {
  return unitOfWork(ctx, async (uow) => {
    await assertActorIsOwner(uow.db, ctx.actor, 'changing installation settings');
    const current = await getOutboundSettings({ db: uow.db, config: ctx.config });
    if (patch.allow_private_networks === undefined || patch.allow_private_networks === current.allow_private_networks) return current;
    if (current.set_by === 'configuration')
      throw new ConflictError(
        'outbound.allow_private_networks is set in the configuration (SVC_OUTBOUND_ALLOW_PRIVATE_NETWORKS), which overrides this setting: change it there',
      );
    const value = { allow_private_networks: patch.allow_private_networks };
    const now = ctx.clock.now();
    await uow.db
      .insertInto('settings')
      .values({ key: OUTBOUND_SETTINGS_KEY, value: JSON.stringify(value), updated_at: now })
      .onConflict((oc) => oc.column('key').doUpdateSet({ value: JSON.stringify(value), updated_at: now }))
      .execute();
    uow.audit({ action: 'settings.updated', entity_type: 'settings', entity_id: OUTBOUND_SETTINGS_KEY, details: value });
    uow.publish(TOPICS.settingsChanged, { key: OUTBOUND_SETTINGS_KEY });
    return { ...value, set_by: 'settings' };
  });
}
