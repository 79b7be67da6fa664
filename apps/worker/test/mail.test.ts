import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { mountAdminApi } from '@svc/admin-api';
import { queueMail } from '@svc/domain';
import { startTestServer, type TestServer, until } from '@svc/testkit';
import { closedPort, parseMail, type SmtpReceiver, startSmtpReceiver } from '@svc/testkit/smtp-receiver';
import { afterEach, describe, expect, it } from 'vitest';
import { createWorker, type WorkerService } from '../src/worker.ts';

// The `mail.send` job end to end: a message queued by the domain reaches the transport the
// config names through the worker (in process, or BullMQ with REDIS_URL).
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => {});
});

async function serverWithWorker(env: Record<string, string>): Promise<{ s: TestServer; worker: WorkerService }> {
  const s = await startTestServer({ env, mount: mountAdminApi });
  const worker = createWorker(s.runtime, { sweepEveryMs: 3_600_000, eventsEveryMs: 3_600_000, webhooksEveryMs: 3_600_000 });
  await worker.start();
  cleanups.push(async () => {
    await worker.stop();
    await s.stop();
  });
  return { s, worker };
}

const message = {
  to: 'customer@example.com',
  subject: 'Your sign-in link',
  text: 'Sign in: http://localhost:8080/portal/v1/auth/magic-link/verify?token=abc123\n\nIt works for 15 minutes.',
  category: 'magic_link',
};

describe('SMTP transport (mail.smtp_url)', () => {
  let smtp: SmtpReceiver;

  it('a queued mail reaches the SMTP server: envelope and From from mail.from, To, Subject and body as sent, after AUTH', async () => {
    smtp = await startSmtpReceiver();
    cleanups.push(() => smtp.close());
    const { s } = await serverWithWorker({ SVC_SMTP_URL: smtp.url, SVC_MAIL_FROM: 'Svc Ops <ops@svc.example>' });
    expect(s.runtime.mailer.kind).toBe('smtp');
    await queueMail(s.deps, message);
    await until('the mail at the SMTP server', () => smtp.mails.length === 1);
    const [mail] = smtp.mails;
    expect(mail?.from).toBe('ops@svc.example');
    expect(mail?.to).toEqual(['customer@example.com']);
    expect(mail?.user).toBe('mailer');
    expect(mail?.headers.from).toBe('Svc Ops <ops@svc.example>');
    expect(mail?.headers.to).toBe('customer@example.com');
    expect(mail?.headers.subject).toBe('Your sign-in link');
    expect(mail?.headers['x-svc-category']).toBe('magic_link');
    expect(mail?.text).toBe(message.text);
  });

  it('SMTP down: the job fails and is retried, not lost; the mail arrives once the server is up', async () => {
    const port = await closedPort();
    const { s } = await serverWithWorker({ SVC_SMTP_URL: `smtp://mailer:mail-password@127.0.0.1:${port}` });
    await queueMail(s.deps, { ...message, subject: 'Retried' });
    await until('a failed attempt in the log', () => s.logs.some((l) => l.msg === 'mail not sent; retried'));
    smtp = await startSmtpReceiver({ port });
    cleanups.push(() => smtp.close());
    await until('the mail after the server came up', () => smtp.mails.length > 0, 30_000);
    expect(smtp.mails.map((m) => m.headers.subject)).toEqual(['Retried']);
  });
});

describe('outbox transport (no SMTP, embedded database)', () => {
  it('writes the mail as an .eml file into <data_dir>/outbox (dir 0700, file 0600) and logs to, subject, file and text', async () => {
    const { s } = await serverWithWorker({});
    expect(s.runtime.mailer.kind).toBe('outbox');
    await queueMail(s.deps, message);
    const dir = join(s.config.data_dir, 'outbox');
    await until('an .eml file', () => {
      try {
        return readdirSync(dir).some((f) => f.endsWith('.eml'));
      } catch {
        return false;
      }
    });
    const name = readdirSync(dir).find((f) => f.endsWith('.eml'));
    expect(name).toMatch(/^\d{8}T\d{9}Z-\d{6}-magic_link-[0-9a-f]{8}\.eml$/);
    const file = join(dir, name as string);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const eml = parseMail(readFileSync(file, 'utf8'));
    expect(eml.headers.to).toBe('customer@example.com');
    expect(eml.headers.from).toBe('svc <no-reply@localhost>');
    expect(eml.headers.subject).toBe('Your sign-in link');
    expect(eml.headers['message-id']).toMatch(/^<.+>$/);
    expect(eml.headers.date).toBeTruthy();
    expect(eml.text).toBe(message.text);
    await until('the log line', () => s.logs.some((l) => l.mail?.file === file));
    const line = s.logs.find((l) => l.mail?.file === file);
    const textFile = file.replace(/\.eml$/, '.txt');
    expect(line?.mail).toEqual({
      to: message.to,
      subject: message.subject,
      category: 'magic_link',
      file,
      text_file: textFile,
      text: message.text,
    });
    expect(line?.msg).toContain('magic-link/verify?token=abc123');
  });

  it('beside each .eml a plain-text copy (.txt, 0600) holds To, Subject, Date and the text as sent', async () => {
    const { s } = await serverWithWorker({});
    await queueMail(s.deps, message);
    const dir = join(s.config.data_dir, 'outbox');
    await until('the log line', () => s.logs.some((l) => l.mail?.text_file));
    const names = readdirSync(dir).sort();
    expect(names).toHaveLength(2);
    const [eml, txt] = names as [string, string];
    expect(txt).toBe(eml.replace(/\.eml$/, '.txt'));
    expect(statSync(join(dir, txt)).mode & 0o777).toBe(0o600);
    expect(readFileSync(join(dir, txt), 'utf8')).toBe(
      `To: customer@example.com\nSubject: Your sign-in link\nDate: ${s.clock.now().toUTCString()}\n\n${message.text}\n`,
    );
  });

  it('a long link (over 76 characters, with = and &) is whole in the plain-text copy, the first URL in it', async () => {
    const { s } = await serverWithWorker({});
    const link = `https://shop.example.com/account/sign-in?token=${'Ab9_-'.repeat(12)}&lang=en&return_to=%2Fsubscriptions%3Fpage%3D2`;
    expect(link.length).toBeGreaterThan(76);
    await queueMail(s.deps, { ...message, text: `Sign in with this link:\n\n${link}\n\nIt works once.\n` });
    await until('the log line', () => s.logs.some((l) => l.mail?.text_file));
    const line = s.logs.find((l) => l.mail?.text_file);
    const copy = readFileSync(line?.mail.text_file, 'utf8');
    // As a person takes a link from a file: the first URL, up to the first blank.
    expect(/https?:\/\/\S+/.exec(copy)?.[0]).toBe(link);
    // The .eml is quoted-printable (what made links dead): the link is not in it as written.
    expect(readFileSync(line?.mail.file, 'utf8')).not.toContain(link);
  });

  it('two mails in one millisecond get two files, listed in the order they were written', async () => {
    const { s } = await serverWithWorker({});
    await queueMail(s.deps, { ...message, subject: 'first', category: 'registration_confirmation' });
    await until('the first file', () => s.logs.some((l) => l.mail?.subject === 'first'));
    await queueMail(s.deps, { ...message, subject: 'second', category: 'event:client.registered' });
    await until('the second file', () => s.logs.some((l) => l.mail?.subject === 'second'));
    const names = readdirSync(join(s.config.data_dir, 'outbox'))
      .filter((f) => f.endsWith('.eml'))
      .sort();
    expect(names).toHaveLength(2);
    expect(names[0]).toContain('-registration_confirmation-');
    expect(names[1]).toContain('-event_client.registered-');
  });
});
