import { SubLinkSettingsFields } from '@svc/domain';
import { openapi } from '@svc/http';

/** The settings as stored and shown: the same fields (and rules) the PATCH body takes, all present. */
export const SubLinkSettingsSchema = openapi(SubLinkSettingsFields, 'SubscriptionLinkSettings');
