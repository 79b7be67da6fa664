import { JOBS, type MailMessage } from '@svc/domain';
import type { TestServer } from '@svc/testkit';

/**
 * The mails the portal hands to the worker (`mail.send` jobs on the server's real job queue),
 * taken here instead of by a worker: what the person would receive, before any transport.
 * The SMTP path itself is proven with a real SMTP receiver (notifications tests).
 */
export interface MailCapture {
  mails: MailMessage[];
  /** The one-time token of the next mail to `to` not read yet (waits for it; the `{token}` of the link). */
  tokenFor(to: string): Promise<string>;
  stop(): Promise<void>;
}

export async function captureMail(s: TestServer): Promise<MailCapture> {
  const mails: MailMessage[] = [];
  const stop = await s.deps.jobs.consume(JOBS.mailSend, async (m) => {
    mails.push(m);
  });
  const read = new Map<string, number>();
  return {
    mails,
    async tokenFor(to) {
      const seen = read.get(to) ?? 0;
      const deadline = Date.now() + 5000;
      while (mails.filter((m) => m.to === to).length <= seen && Date.now() < deadline) await settle();
      const mail = mails.filter((m) => m.to === to)[seen];
      if (!mail) throw new Error(`no new mail to ${to}; mails: ${JSON.stringify(mails.map((m) => m.to))}`);
      read.set(to, seen + 1);
      const m = /[#?&]token=([A-Za-z0-9_-]+)/.exec(mail.text);
      if (!m) throw new Error(`no token in ${mail.text}`);
      return decodeURIComponent(m[1] as string);
    },
    stop,
  };
}

/** Lets the in-process queue hand queued jobs over (it runs them on the next turns of the loop). */
export const settle = () => new Promise((r) => setTimeout(r, 50));
