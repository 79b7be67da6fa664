import type { Mailer } from '@svc/domain';
import nodemailer from 'nodemailer';

/**
 * Mail through an SMTP server (mail.smtp_url: smtp://user:password@host:587 with STARTTLS when
 * offered, smtps://...:465 for TLS from the start). A send that the server did not accept
 * rejects, and the `mail.send` job is retried by the queue.
 */
export function createSmtpMailer(smtpUrl: string, from: string): Mailer {
  // Bounded waits, so a silent server fails the job instead of holding the worker.
  const transport = nodemailer.createTransport(
    { url: smtpUrl, connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 30_000 },
    { from },
  );
  return {
    kind: 'smtp',
    async send(m) {
      const info = await transport.sendMail({
        from,
        to: m.to,
        subject: m.subject,
        text: m.text,
        ...(m.html !== undefined ? { html: m.html } : {}),
        headers: { 'X-Svc-Category': m.category },
      });
      return { message_id: info.messageId };
    },
    async close() {
      transport.close();
    },
  };
}
