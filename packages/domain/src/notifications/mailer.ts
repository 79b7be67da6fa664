import type { MailMessage } from './queue-mail.ts';

/**
 * The mail transport port (docs/notifications.md). The worker's `mail.send` job hands each
 * message to it; a rejected promise fails the job, which the queue retries. Adapters live in
 * packages/runtime (SMTP through nodemailer, the outbox folder, or none).
 */
export interface Mailer {
  /** smtp, outbox or none: logged at start, shown where an operator asks why no mail came. */
  readonly kind: 'smtp' | 'outbox' | 'none';
  /** Sends (or writes) one mail; rejects when the transport did not take it. */
  send(message: MailMessage): Promise<MailSent>;
  close(): Promise<void>;
}

export interface MailSent {
  /** The Message-ID the mail went out with, when the transport made one. */
  message_id?: string | undefined;
  /** The outbox file the mail was written to. */
  file?: string | undefined;
}
