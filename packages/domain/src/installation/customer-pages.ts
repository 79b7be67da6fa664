import { appsFor, DEFAULT_APP_ORDER, PLATFORMS, type Platform } from '@svc/client-apps';
import type { Config } from '@svc/config';
import { z } from 'zod';
import { assertActorIsOwner } from '../admins/actor-guard.ts';
import { TOPICS } from '../shared/bus.ts';
import type { DomainContext, DomainDeps } from '../shared/context.ts';
import { publicBaseUrl } from '../shared/public-url.ts';
import { unitOfWork } from '../shared/unit-of-work.ts';

/**
 * The operator's brand on the customer pages (issue 32 item 6): the portal web app and the
 * server-rendered /sub/{token} page read the same settings (one key of `settings`; no row: the
 * defaults). Edited at /api/v1/settings/customer-pages (owners), read by anyone at
 * GET /portal/v1/branding: nothing in it is secret.
 */
export const CUSTOMER_PAGES_KEY = 'customer_pages';

export const CUSTOMER_LOCALES = ['en', 'ru', 'fa', 'zh'] as const;

/** The largest logo kept (decoded bytes): a small mark, not a photograph. */
export const LOGO_MAX_BYTES = 64 * 1024;

const URL_RULE = 'an http or https URL (at most 500 characters), or null';
const HttpUrl = z
  .string()
  .max(500, URL_RULE)
  .refine((v) => /^https?:\/\/[^\s]+$/i.test(v) && URL.canParse(v), URL_RULE);

const NAME = 'between 1 and 60 characters, not blank';
const LOGO = `a data: URL of a PNG, JPEG or WebP image (base64), at most ${LOGO_MAX_BYTES / 1024} KiB; SVG is refused (it can carry script)`;

/** The image's own signature, whatever the data URL claims (a mislabelled file is refused). */
const SIGNATURES: Record<string, (b: Buffer) => boolean> = {
  'image/png': (b) => b.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])),
  'image/jpeg': (b) => b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff,
  'image/webp': (b) => b.subarray(0, 4).toString('latin1') === 'RIFF' && b.subarray(8, 12).toString('latin1') === 'WEBP',
};

/** data:image/<png|jpeg|webp>;base64,<data>: checked by length before it is decoded. */
export function logoProblem(v: string): string | null {
  const head = /^data:(image\/(?:png|jpeg|webp));base64,/.exec(v.slice(0, 40));
  if (!head) return LOGO;
  const data = v.slice(head[0].length);
  if (data.length > Math.ceil((LOGO_MAX_BYTES * 4) / 3) + 4 || !/^[A-Za-z0-9+/]*={0,2}$/.test(data)) return LOGO;
  const bytes = Buffer.from(data, 'base64');
  if (bytes.length === 0 || bytes.length > LOGO_MAX_BYTES) return LOGO;
  return (SIGNATURES[head[1] as string] as (b: Buffer) => boolean)(bytes) ? null : `${LOGO} (the data is not a ${head[1]})`;
}

const Logo = z
  .string()
  .max(Math.ceil((LOGO_MAX_BYTES * 4) / 3) + 64, LOGO)
  .superRefine((v, ctx) => {
    const bad = logoProblem(v);
    if (bad) ctx.addIssue({ code: 'custom', message: bad });
  });

const text = (max: number, what: string) =>
  z
    .string()
    .max(max, `${what}: at most ${max} characters`)
    .refine((t) => t.trim() !== '', `${what}: not blank (null removes it)`);

/** The apps offered on one platform, in order: catalogued ids of apps that run there, no repeats. */
const appOrder = (platform: Platform) =>
  z
    .array(z.string().max(40))
    .max(20, 'at most 20 apps')
    .superRefine((ids, ctx) => {
      const known = new Set(appsFor(platform, ids).map((a) => a.id));
      const seen = new Set<string>();
      for (const [i, id] of ids.entries()) {
        if (!known.has(id)) ctx.addIssue({ code: 'custom', path: [i], message: `${id} is not an app for ${platform} (@svc/client-apps)` });
        if (seen.has(id)) ctx.addIssue({ code: 'custom', path: [i], message: `${id} is named twice` });
        seen.add(id);
      }
    });

const LocaleTexts = z
  .object({
    welcome: text(300, 'welcome').nullable().optional().meta({ description: 'A line under the name on the sign-in and home screens' }),
    announcement: text(500, 'announcement').nullable().optional().meta({ description: 'Replaces the announcement in this language' }),
  })
  .strict();

export const CustomerPagesFields = z.object({
  name: text(60, NAME).min(1, NAME).nullable().meta({ description: 'The brand shown on the customer pages; null: the public host name' }),
  logo: Logo.nullable().meta({ description: LOGO }),
  primary_color: z
    .string()
    .regex(/^#[0-9a-fA-F]{6}$/, 'a colour as #rrggbb, or null')
    .nullable()
    .meta({ description: 'The main colour of buttons and links; null: the default' }),
  support_url: HttpUrl.nullable().meta({ description: 'Where customers get help (a page, a chat); null: not shown' }),
  announcement: text(500, 'announcement').nullable().meta({ description: 'A notice at the top of every customer page; null: none' }),
  apps: z
    .object(
      Object.fromEntries(PLATFORMS.map((p) => [p, appOrder(p).optional()])) as Record<Platform, z.ZodOptional<ReturnType<typeof appOrder>>>,
    )
    .strict()
    .meta({ description: 'The apps offered per platform, recommended first; a platform left out gets the default order' }),
  texts: z
    .object(
      Object.fromEntries(CUSTOMER_LOCALES.map((l) => [l, LocaleTexts.optional()])) as Record<
        (typeof CUSTOMER_LOCALES)[number],
        z.ZodOptional<typeof LocaleTexts>
      >,
    )
    .strict()
    .meta({ description: 'Texts per language (en, ru, fa, zh)' }),
});
export type CustomerPages = z.output<typeof CustomerPagesFields>;

/** PATCH: a merge of the top-level fields (apps and texts are replaced whole when given). */
export const UpdateCustomerPagesInput = CustomerPagesFields.partial().strict().brand<'UpdateCustomerPagesInput'>();
export type UpdateCustomerPagesInput = z.output<typeof UpdateCustomerPagesInput>;

export const DEFAULT_CUSTOMER_PAGES: CustomerPages = {
  name: null,
  logo: null,
  primary_color: null,
  support_url: null,
  announcement: null,
  apps: {},
  texts: {},
};

export async function getCustomerPages(deps: Pick<DomainDeps, 'db'>): Promise<CustomerPages> {
  const row = await deps.db.selectFrom('settings').select('value').where('key', '=', CUSTOMER_PAGES_KEY).executeTakeFirst();
  return { ...DEFAULT_CUSTOMER_PAGES, ...(row?.value as Partial<CustomerPages> | undefined) };
}

/** What the customer pages use: every default filled in (the name, the app order of every platform). */
export interface Branding {
  name: string;
  logo: string | null;
  primary_color: string | null;
  support_url: string | null;
  announcement: string | null;
  apps: Record<Platform, string[]>;
  texts: CustomerPages['texts'];
}

export function brandingOf(pages: CustomerPages, config: Pick<Config, 'http'>): Branding {
  return {
    name: pages.name ?? new URL(publicBaseUrl(config)).hostname,
    logo: pages.logo,
    primary_color: pages.primary_color,
    support_url: pages.support_url,
    announcement: pages.announcement,
    apps: Object.fromEntries(PLATFORMS.map((p) => [p, appsFor(p, pages.apps[p] ?? DEFAULT_APP_ORDER[p]).map((a) => a.id)])) as Record<
      Platform,
      string[]
    >,
    texts: pages.texts,
  };
}

export async function getBranding(deps: Pick<DomainDeps, 'db' | 'config'>): Promise<Branding> {
  return brandingOf(await getCustomerPages(deps), deps.config);
}

/** Owners only (installation settings, spec 5.4), audited; processes caching it hear `settings.changed`. */
export async function updateCustomerPages(ctx: DomainContext, patch: UpdateCustomerPagesInput): Promise<CustomerPages> {
  return unitOfWork(ctx, async (uow) => {
    await assertActorIsOwner(uow.db, ctx.actor, 'changing installation settings');
    const current = await getCustomerPages({ db: uow.db });
    const given = Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined)) as Partial<CustomerPages>;
    const merged: CustomerPages = { ...current, ...given };
    if (JSON.stringify(merged) === JSON.stringify(current)) return current;
    const now = ctx.clock.now();
    await uow.db
      .insertInto('settings')
      .values({ key: CUSTOMER_PAGES_KEY, value: JSON.stringify(merged), updated_at: now })
      .onConflict((oc) => oc.column('key').doUpdateSet({ value: JSON.stringify(merged), updated_at: now }))
      .execute();
    // The logo itself is not copied into the audit log (up to 64 KiB): that it changed is.
    uow.audit({
      action: 'settings.updated',
      entity_type: 'settings',
      entity_id: CUSTOMER_PAGES_KEY,
      details: { fields: Object.keys(given) },
    });
    uow.publish(TOPICS.settingsChanged, { key: CUSTOMER_PAGES_KEY });
    return merged;
  });
}
