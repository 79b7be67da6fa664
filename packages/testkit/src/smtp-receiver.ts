import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

export interface ReceivedMail {
  /** SMTP envelope. */
  from: string;
  to: string[];
  /** The user the client authenticated as, if it did. */
  user: string | undefined;
  /** Headers of the message (unfolded, names lower-cased). */
  headers: Record<string, string>;
  /** The text body, transfer encoding undone. */
  text: string;
  raw: string;
}

/** Undoes quoted-printable (what nodemailer uses for long or non-ASCII lines). */
const fromQuotedPrintable = (s: string) =>
  Buffer.from(
    s.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_m, h: string) => String.fromCharCode(Number.parseInt(h, 16))),
    'latin1',
  ).toString('utf8');

export function parseMail(raw: string): { headers: Record<string, string>; text: string } {
  const split = raw.indexOf('\r\n\r\n');
  const head = raw.slice(0, split).replace(/\r\n[ \t]+/g, ' ');
  const headers: Record<string, string> = {};
  for (const line of head.split('\r\n')) {
    const i = line.indexOf(':');
    if (i > 0) headers[line.slice(0, i).toLowerCase()] = line.slice(i + 1).trim();
  }
  let text = raw.slice(split + 4);
  const cte = headers['content-transfer-encoding']?.toLowerCase();
  if (cte === 'quoted-printable') text = fromQuotedPrintable(text);
  else if (cte === 'base64') text = Buffer.from(text, 'base64').toString('utf8');
  return { headers, text: text.replace(/\r\n/g, '\n').replace(/\n$/, '') };
}

/**
 * A real SMTP server on 127.0.0.1 (npm smtp-server): plain SMTP, AUTH accepted for `user`
 * with `password` (allowed without TLS: it is a loopback test), every message kept.
 */
export async function startSmtpReceiver(opts: { port?: number; user?: string; password?: string } = {}) {
  const mails: ReceivedMail[] = [];
  const user = opts.user ?? 'mailer';
  const password = opts.password ?? 'mail-password';
  const server = new SMTPServer({
    disabledCommands: ['STARTTLS'],
    allowInsecureAuth: true,
    authOptional: true,
    logger: false,
    onAuth(auth, _session, cb) {
      if (auth.username === user && auth.password === password) cb(null, { user });
      else cb(new Error('invalid credentials'));
    },
    onData(stream, session, cb) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        mails.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          user: session.user as string | undefined,
          raw,
          ...parseMail(raw),
        });
        cb();
      });
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, '127.0.0.1', () => resolve());
  });
  const { port } = server.server.address() as AddressInfo;
  return {
    port,
    url: `smtp://${user}:${password}@127.0.0.1:${port}`,
    mails,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
export type SmtpReceiver = Awaited<ReturnType<typeof startSmtpReceiver>>;

/** A port nothing listens on right now (an SMTP server that is down). */
export async function closedPort(): Promise<number> {
  const r = await startSmtpReceiver();
  await r.close();
  return r.port;
}
