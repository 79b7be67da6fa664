import { z } from '@hono/zod-openapi';
import { MAX_SUB_FORMAT_RULES, SUB_FORMATS, subFormatPatternError } from '@svc/domain';

export const SubFormatRuleSchema = z
  .object({
    user_agent: z
      .string()
      .min(1)
      .max(200)
      .superRefine((v, ctx) => {
        const bad = subFormatPatternError(v);
        if (bad) ctx.addIssue({ code: 'custom', message: bad });
      })
      .openapi({ description: 'case-insensitive regular expression tested against the User-Agent', example: '^(clash-verge|mihomo)' }),
    format: z.enum(SUB_FORMATS),
  })
  .strict()
  .openapi('SubFormatRule');

const Url = z
  .string()
  .max(500)
  .refine((v) => /^https?:\/\/[^\s]+$/i.test(v) && URL.canParse(v), 'an http or https URL');

export const SubLinkSettingsSchema = z
  .object({
    format_rules: z.array(SubFormatRuleSchema).max(MAX_SUB_FORMAT_RULES).openapi({
      description:
        'Tried in order; the first matching rule picks the format. No match: a browser (Accept text/html) gets the html page, anything else the base64 list.',
    }),
    title: z.string().min(1).max(100).nullable().openapi({ description: 'profile-title; null: the public host name' }),
    update_interval_hours: z.number().int().min(1).max(168).openapi({ description: 'profile-update-interval' }),
    support_url: Url.nullable().openapi({ description: 'support-url; null: not sent' }),
    web_page_url: Url.nullable().openapi({ description: 'profile-web-page-url; null: the public base URL' }),
  })
  .openapi('SubscriptionLinkSettings');

export const SubLinkSettingsPatchSchema = SubLinkSettingsSchema.partial().strict().openapi('SubscriptionLinkSettingsPatch');
