export { checkInvariants } from './invariants.ts';
export { ConfigError, loadConfig } from './load.ts';
export { type MailTransportKind, mailTransportOf } from './mail-transport.ts';
export { type Config, type ConfigInput, configSchema, type OAuthProviderConfig, type RateLimitWindow } from './schema.ts';
