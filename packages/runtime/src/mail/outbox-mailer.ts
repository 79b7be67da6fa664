import { randomBytes } from 'node:crypto';
import { chmod, mkdir, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Clock, Mailer } from '@svc/domain';
import MailComposer from 'nodemailer/lib/mail-composer/index.js';
import type { Logger } from 'pino';

/**
 * The outbox transport (docs/notifications.md): with no SMTP server, every mail becomes an
 * RFC 5322 .eml file in `<data_dir>/outbox` (directory 0700, files 0600: mails carry sign-in
 * links) named so a listing sorts by time, then logged with its text so a person trying the
 * system can follow a link from the log. Open a file with any mail client.
 *
 * Beside each .eml, a .txt of the same name holds what a person reads (To, Subject, Date and
 * the text as sent): the .eml body is quoted-printable, which breaks lines at 76 characters
 * with `=` and writes `=` as `=3D`, so a link copied out of it is dead.
 */
export function createOutboxMailer(opts: { dir: string; from: string; clock: Clock; log: Logger }): Mailer {
  let ready: Promise<void> | undefined;
  const prepare = () => {
    ready ??= mkdir(opts.dir, { recursive: true, mode: 0o700 })
      .then(() => chmod(opts.dir, 0o700))
      .catch((err) => {
        ready = undefined;
        throw err;
      });
    return ready;
  };
  return {
    kind: 'outbox',
    async send(m) {
      await prepare();
      const date = opts.clock.now();
      const message = new MailComposer({
        from: opts.from,
        to: m.to,
        subject: m.subject,
        text: m.text,
        ...(m.html !== undefined ? { html: m.html } : {}),
        headers: { 'X-Svc-Category': m.category },
        date,
      }).compile();
      const eml = await message.build();
      const file = join(opts.dir, outboxFileName(date, m.category));
      const textFile = file.replace(/\.eml$/, '.txt');
      // The copy first, so a .eml in the folder always has its .txt beside it.
      await writeWhole(textFile, plainTextCopy(m, date));
      await writeWhole(file, eml);
      const messageId = message.messageId();
      opts.log.info(
        { mail: { to: m.to, subject: m.subject, category: m.category, file, text_file: textFile, text: m.text } },
        `mail written to the outbox (no SMTP configured): to=${m.to} subject=${JSON.stringify(m.subject)} file=${textFile}\n${m.text}`,
      );
      return { message_id: messageId, file };
    },
    async close() {},
  };
}

/** Written aside, then renamed: whoever watches the folder never sees half a file. */
async function writeWhole(file: string, content: string | Buffer): Promise<void> {
  await writeFile(`${file}.part`, content, { mode: 0o600, flag: 'wx' });
  await rename(`${file}.part`, file);
}

/** The mail as a person reads it: the headers they need, a blank line, the text unencoded (links whole). */
export function plainTextCopy(m: { to: string; subject: string; text: string }, date: Date): string {
  const text = m.text.endsWith('\n') ? m.text : `${m.text}\n`;
  // One line per header whatever a value holds: the blank line is where the text starts.
  const line = (v: string) => v.replace(/\s+/g, ' ').trim();
  return `To: ${line(m.to)}\nSubject: ${line(m.subject)}\nDate: ${date.toUTCString()}\n\n${text}`;
}

let sequence = 0;

/**
 * `20261124T153845123Z-000001-event_client.registered-1a2b3c4d.eml`: sorts by time, then by
 * the order this process wrote them (several in one millisecond); the category says what it is.
 */
export function outboxFileName(at: Date, category: string): string {
  const stamp = at.toISOString().replace(/[-:]/g, '').replace('.', '');
  const kind = category.replace(/[^a-zA-Z0-9._-]+/g, '_').slice(0, 60) || 'mail';
  sequence = (sequence + 1) % 1_000_000;
  return `${stamp}-${String(sequence).padStart(6, '0')}-${kind}-${randomBytes(4).toString('hex')}.eml`;
}
