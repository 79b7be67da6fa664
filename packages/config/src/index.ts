export { checkInvariants } from './invariants.ts';
export { ConfigError, loadConfig } from './load.ts';
export { type MailTransportKind, mailTransportOf } from './mail-transport.ts';
export { type Config, type ConfigInput, configSchema } from './schema.ts';
export type { OAuthProviderConfig, RateLimitWindow } from './schema-sign-in.ts';
