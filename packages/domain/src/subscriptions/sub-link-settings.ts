import { ValidationError } from '../errors.ts';
import { TOPICS } from '../shared/bus.ts';
import type { DomainContext, DomainDeps } from '../shared/context.ts';
import { unitOfWork } from '../shared/unit-of-work.ts';
import { DEFAULT_SUB_FORMAT_RULES, SUB_FORMATS, type SubFormat, type SubFormatRule, subFormatPatternError } from './sub-format-rules.ts';

/**
 * What GET /sub/{token} answers besides the servers, edited by admins at
 * /api/v1/settings/subscription-link (stored under one key of `settings`; no row = defaults).
 */
export interface SubLinkSettings {
  /** Tried in order; the first whose pattern matches the User-Agent picks the format. */
  format_rules: SubFormatRule[];
  /** profile-title (the name apps give the subscription); null: the public host name. */
  title: string | null;
  /** profile-update-interval, hours between the apps' automatic refreshes. */
  update_interval_hours: number;
  /** support-url; null: not sent. */
  support_url: string | null;
  /** profile-web-page-url; null: the public base URL. */
  web_page_url: string | null;
}

export const SUB_LINK_SETTINGS_KEY = 'subscription_link';
export const MAX_SUB_FORMAT_RULES = 50;

export const DEFAULT_SUB_LINK_SETTINGS: SubLinkSettings = {
  format_rules: DEFAULT_SUB_FORMAT_RULES.map((r) => ({ ...r })),
  title: null,
  update_interval_hours: 12,
  support_url: null,
  web_page_url: null,
};

export async function getSubLinkSettings(deps: Pick<DomainDeps, 'db'>): Promise<SubLinkSettings> {
  const row = await deps.db.selectFrom('settings').select('value').where('key', '=', SUB_LINK_SETTINGS_KEY).executeTakeFirst();
  return { ...DEFAULT_SUB_LINK_SETTINGS, ...(row?.value as Partial<SubLinkSettings> | undefined) };
}

export type SubLinkSettingsPatch = Partial<SubLinkSettings>;

/**
 * PATCH (a merge; format_rules is a full replacement). Every pattern must be a regular
 * expression and every format one we render; URLs are http(s). Audited; processes caching
 * the settings hear `settings.changed`.
 */
export async function updateSubLinkSettings(ctx: DomainContext, patch: SubLinkSettingsPatch): Promise<SubLinkSettings> {
  const errors: Record<string, string> = {};
  if (patch.format_rules !== undefined) {
    if (patch.format_rules.length > MAX_SUB_FORMAT_RULES) errors.format_rules = `at most ${MAX_SUB_FORMAT_RULES} rules`;
    patch.format_rules.forEach((r, i) => {
      const bad = subFormatPatternError(r.user_agent);
      if (bad) errors[`format_rules.${i}.user_agent`] = bad;
      if (!(SUB_FORMATS as readonly string[]).includes(r.format)) errors[`format_rules.${i}.format`] = `one of ${SUB_FORMATS.join(', ')}`;
    });
  }
  if (patch.title !== undefined && patch.title !== null && (patch.title.trim() === '' || patch.title.length > 100))
    errors.title = 'between 1 and 100 characters, or null';
  if (
    patch.update_interval_hours !== undefined &&
    !(Number.isInteger(patch.update_interval_hours) && patch.update_interval_hours >= 1 && patch.update_interval_hours <= 168)
  )
    errors.update_interval_hours = 'a whole number of hours from 1 to 168';
  for (const field of ['support_url', 'web_page_url'] as const) {
    const v = patch[field];
    if (v !== undefined && v !== null && !isHttpUrl(v)) errors[field] = 'an http or https URL, or null';
  }
  if (Object.keys(errors).length) throw new ValidationError('invalid subscription link settings', errors);

  const next = await unitOfWork(ctx, async (uow) => {
    const trx = uow.db;
    const current = await getSubLinkSettings({ db: trx });
    const merged: SubLinkSettings = {
      ...current,
      ...Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined)),
      ...(patch.format_rules
        ? { format_rules: patch.format_rules.map((r) => ({ user_agent: r.user_agent, format: r.format as SubFormat })) }
        : {}),
    };
    const now = ctx.clock.now();
    await trx
      .insertInto('settings')
      .values({ key: SUB_LINK_SETTINGS_KEY, value: JSON.stringify(merged), updated_at: now })
      .onConflict((oc) => oc.column('key').doUpdateSet({ value: JSON.stringify(merged), updated_at: now }))
      .execute();
    uow.audit({
      action: 'settings.updated',
      entity_type: 'settings',
      entity_id: SUB_LINK_SETTINGS_KEY,
      details: { fields: Object.keys(patch).filter((k) => patch[k as keyof SubLinkSettingsPatch] !== undefined) },
    });
    return merged;
  });
  await ctx.bus.publish(TOPICS.settingsChanged, { key: SUB_LINK_SETTINGS_KEY }).catch(() => {});
  return next;
}

function isHttpUrl(v: string): boolean {
  try {
    const u = new URL(v);
    return (u.protocol === 'https:' || u.protocol === 'http:') && v.length <= 500;
  } catch {
    return false;
  }
}
