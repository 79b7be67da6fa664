import { join } from 'node:path';
import { type Config, mailTransportOf } from '@svc/config';
import type { Clock, Mailer } from '@svc/domain';
import type { Logger } from 'pino';
import { createOutboxMailer } from './outbox-mailer.ts';
import { createSmtpMailer } from './smtp-mailer.ts';

/** The mail transport the config asks for (mailTransportOf): SMTP, the outbox folder, or none. */
export function createMailer(config: Config, deps: { clock: Clock; log: Logger }): Mailer {
  const kind = mailTransportOf(config);
  if (kind === 'smtp') return createSmtpMailer(config.mail.smtp_url as string, config.mail.from);
  if (kind === 'outbox') return createOutboxMailer({ dir: join(config.data_dir, 'outbox'), from: config.mail.from, ...deps });
  return {
    kind: 'none',
    async send(m) {
      // Nowhere to send: dropped, said loudly (without the text: it may carry a sign-in link).
      deps.log.warn(
        { mail: { to: m.to, subject: m.subject, category: m.category } },
        'no mail transport configured (SVC_SMTP_URL or SVC_MAIL_OUTBOX): mail dropped',
      );
      return {};
    },
    async close() {},
  };
}
