import type { DomainDeps } from '../shared/context.ts';
import { JOBS } from '../shared/jobs.ts';
import type { UnitOfWork } from '../shared/unit-of-work.ts';

/** One mail, rendered: the worker's `mail.send` job hands it to the transport (SMTP, or the outbox folder). */
export interface MailMessage {
  to: string;
  subject: string;
  text: string;
  html?: string | undefined;
  /** What kind of mail (magic_link, registration_confirmation, event:<type>): logs and the outbox file name. */
  category: string;
}

/** Sends a mail through the worker, after the unit commits (never for a change that rolled back). */
export function queueMailAfterCommit(uow: UnitOfWork, message: MailMessage): void {
  uow.enqueue(JOBS.mailSend, message);
}

/** Sends a mail through the worker now (no transaction involved). */
export async function queueMail(deps: Pick<DomainDeps, 'jobs'>, message: MailMessage): Promise<void> {
  await deps.jobs.enqueue(JOBS.mailSend, message);
}
