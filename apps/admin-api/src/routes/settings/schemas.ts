import { CustomerPagesFields, OutboundSettingsFields, SubLinkSettingsFields } from '@svc/domain';
import { openapi } from '@svc/http';
import { z } from 'zod';

/** The settings as stored and shown: the same fields (and rules) the PATCH body takes, all present. */
export const SubLinkSettingsSchema = openapi(SubLinkSettingsFields, 'SubscriptionLinkSettings');

/** The outbound policy's setting, and where the value in force comes from. */
export const OutboundSettingsSchema = openapi(
  OutboundSettingsFields.extend({
    set_by: z.enum(['settings', 'configuration']).meta({
      description: 'configuration: outbound.allow_private_networks (SVC_OUTBOUND_ALLOW_PRIVATE_NETWORKS) is set and overrides the setting',
    }),
  }),
  'OutboundSettings',
);

/** The customer pages' brand as stored and shown: the PATCH body's fields, all present. */
export const CustomerPagesSchema = openapi(CustomerPagesFields, 'CustomerPages');
