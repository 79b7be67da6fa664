import type { Config } from './schema.ts';

/**
 * Where mail goes (docs/notifications.md): `smtp` when mail.smtp_url is set; else `outbox`
 * (.eml files in <data_dir>/outbox, and the log) when mail.outbox is on, which it is by
 * default with the embedded database (a one-machine, all-in-one installation); else `none`
 * (mails are dropped with a warning). The startup invariant counts smtp and outbox as a
 * transport.
 */
export type MailTransportKind = 'smtp' | 'outbox' | 'none';

export function mailTransportOf(config: Pick<Config, 'mail' | 'database'>): MailTransportKind {
  if (config.mail.smtp_url) return 'smtp';
  const outbox = config.mail.outbox ?? config.database.url === undefined;
  return outbox ? 'outbox' : 'none';
}
