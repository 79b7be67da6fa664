import { z } from 'zod';
import { assertActorIsOwner } from '../admins/actor-guard.ts';
import { TOPICS } from '../shared/bus.ts';
import type { DomainContext, DomainDeps } from '../shared/context.ts';
import { unitOfWork } from '../shared/unit-of-work.ts';
import {
  DEFAULT_SUB_FORMAT_RULES,
  explainSubFormat,
  SUB_FORMATS,
  type SubFormatChoice,
  subFormatPatternError,
} from './sub-format-rules.ts';

export const MAX_SUB_FORMAT_RULES = 50;

/** One format rule as admins save it: a pattern that compiles, and a format we render. */
export const SubFormatRuleInput = z
  .object({
    user_agent: z
      .string()
      .superRefine((pattern, ctx) => {
        const bad = subFormatPatternError(pattern);
        if (bad) ctx.addIssue({ code: 'custom', message: bad });
      })
      .meta({
        description:
          'case-insensitive RE2 regular expression (linear time: back-references and lookaround are refused), searched for in the first 512 characters of the User-Agent',
        example: '^(clash-verge|mihomo)',
        minLength: 1,
        maxLength: 200,
      }),
    format: z.enum(SUB_FORMATS),
  })
  .strict()
  .meta({ id: 'SubFormatRule' });

const TITLE = 'between 1 and 100 characters, not blank, or null';
const INTERVAL = 'a whole number of hours from 1 to 168';
const URL_RULE = 'an http or https URL (at most 500 characters), or null';
const HttpUrl = z
  .string()
  .max(500, URL_RULE)
  .refine((v) => /^https?:\/\/[^\s]+$/i.test(v) && URL.canParse(v), URL_RULE);

/**
 * What GET /sub/{token} answers besides the servers, edited by admins at
 * /api/v1/settings/subscription-link (stored under one key of `settings`; no row = defaults).
 */
export const SubLinkSettingsFields = z.object({
  format_rules: z.array(SubFormatRuleInput).max(MAX_SUB_FORMAT_RULES, `at most ${MAX_SUB_FORMAT_RULES} rules`).meta({
    description:
      'Tried in order; the first matching rule picks the format. No match: a browser (Accept text/html) gets the html page, anything else the base64 list.',
  }),
  title: z
    .string()
    .min(1, TITLE)
    .max(100, TITLE)
    .refine((t) => t.trim() !== '', TITLE)
    .nullable()
    .meta({ description: 'profile-title (the name apps give the subscription); null: the public host name' }),
  update_interval_hours: z
    .number()
    .int(INTERVAL)
    .min(1, INTERVAL)
    .max(168, INTERVAL)
    .meta({ description: "profile-update-interval, hours between the apps' automatic refreshes" }),
  support_url: HttpUrl.nullable().meta({ description: 'support-url; null: not sent' }),
  web_page_url: HttpUrl.nullable().meta({ description: 'profile-web-page-url; null: the public base URL' }),
});
export type SubLinkSettings = z.output<typeof SubLinkSettingsFields>;

/** PATCH /settings/subscription-link: a merge; format_rules replaces the whole list. */
export const UpdateSubLinkSettingsInput = SubLinkSettingsFields.partial().strict().brand<'UpdateSubLinkSettingsInput'>();
export type UpdateSubLinkSettingsInput = z.output<typeof UpdateSubLinkSettingsInput>;

export const SUB_LINK_SETTINGS_KEY = 'subscription_link';

/**
 * The settings' User-Agent tester: which format a request with this User-Agent (and Accept)
 * gets, under the saved rules or under `format_rules` being edited (checked as a save checks
 * them, nothing saved).
 */
export const PreviewSubFormatInput = z
  .object({
    user_agent: z.string().max(2048).meta({ description: 'as an app sends it; only the first 512 characters are matched' }),
    accept: z.string().max(1024).optional().meta({ description: 'the Accept header, if any (a browser gets the html page)' }),
    format_rules: SubLinkSettingsFields.shape.format_rules
      .optional()
      .meta({ description: 'rules to try instead of the saved ones (not saved)' }),
  })
  .strict()
  .brand<'PreviewSubFormatInput'>();
export type PreviewSubFormatInput = z.output<typeof PreviewSubFormatInput>;

export async function previewSubFormat(ctx: DomainContext, input: PreviewSubFormatInput): Promise<SubFormatChoice> {
  const rules = input.format_rules ?? (await getSubLinkSettings(ctx)).format_rules;
  return explainSubFormat(rules, input.user_agent, input.accept);
}

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

/** Audited; processes caching the settings hear `settings.changed` after commit. */
export async function updateSubLinkSettings(ctx: DomainContext, patch: UpdateSubLinkSettingsInput): Promise<SubLinkSettings> {
  return unitOfWork(ctx, async (uow) => {
    const trx = uow.db;
    // Installation settings are the owner's (spec 5.4), whichever surface asks.
    await assertActorIsOwner(trx, ctx.actor, 'changing installation settings');
    const current = await getSubLinkSettings({ db: trx });
    const given = Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined)) as Partial<SubLinkSettings>;
    const merged: SubLinkSettings = { ...current, ...given };
    // Nothing given, or every value as it is: no write, no audit entry, nothing announced (issue 12.8).
    if (JSON.stringify(merged) === JSON.stringify(current)) return current;
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
      details: { fields: Object.keys(given) },
    });
    uow.publish(TOPICS.settingsChanged, { key: SUB_LINK_SETTINGS_KEY });
    return merged;
  });
}
