import type { OpenAPIHono } from '@hono/zod-openapi';
import { z } from '@hono/zod-openapi';
import { PLATFORMS } from '@svc/client-apps';
import { CUSTOMER_LOCALES, getBranding } from '@svc/domain';
import { type AppEnv, defineRoute, json } from '@svc/http';

const LocaleTexts = z.object({ welcome: z.string().nullable().optional(), announcement: z.string().nullable().optional() });

export const BrandingSchema = z
  .object({
    name: z.string().openapi({ description: 'The brand (the operator’s, else the public host name)' }),
    logo: z.string().nullable().openapi({ description: 'A data: URL of a PNG, JPEG or WebP image, or null' }),
    primary_color: z.string().nullable().openapi({ description: '#rrggbb, or null for the default' }),
    support_url: z.string().nullable(),
    announcement: z.string().nullable(),
    apps: z
      .object(
        Object.fromEntries(PLATFORMS.map((p) => [p, z.array(z.string())])) as Record<(typeof PLATFORMS)[number], z.ZodArray<z.ZodString>>,
      )
      .openapi({ description: 'Per platform, the apps to offer in order (ids of @svc/client-apps), the operator’s recommended first' }),
    texts: z
      .object(
        Object.fromEntries(CUSTOMER_LOCALES.map((l) => [l, LocaleTexts.optional()])) as Record<
          (typeof CUSTOMER_LOCALES)[number],
          z.ZodOptional<typeof LocaleTexts>
        >,
      )
      .openapi({ description: 'Texts per language' }),
  })
  .openapi('PortalBranding');

export const route = defineRoute({
  method: 'get',
  path: '/branding',
  tags: ['branding'],
  summary: 'The operator’s brand for the customer pages (public: shown before sign-in)',
  description: 'Set by owners at PATCH /api/v1/settings/customer-pages; the /sub/{token} page uses the same.',
  auth: null,
  responses: { 200: json(BrandingSchema, 'Branding') },
});

export const register = (app: OpenAPIHono<AppEnv>) => app.openapi(route, async (c) => c.json(await getBranding(c.get('deps')), 200));
