import { dispatchEvents, JOBS, type MailMessage, parseInput, RegisterInput, registerWithPassword, signInWithProfile } from '@svc/domain';
import { createDomainTestbed, type DomainTestbed, fixtures, until } from '@svc/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// Issue 28 item 6: owners are told of every self-registration, in mode application (it waits
// for them) and in mode open (it does not), by client.registered with the mode, whatever the
// method (password, OAuth first sign-in), and mailed by default in words that fit the mode.
interface Mode {
  bed: DomainTestbed;
  mails: MailMessage[];
  owner: string;
  stop: () => Promise<void>;
}
async function mode(registration: 'open' | 'application'): Promise<Mode> {
  const bed = await createDomainTestbed({
    env: { SVC_PORTAL_REGISTRATION: registration, SVC_SMTP_URL: 'smtp://127.0.0.1:1', SVC_PUBLIC_BASE_URL: 'https://cp.example.com' },
  });
  const mails: MailMessage[] = [];
  const stopMail = await bed.deps.jobs.consume(JOBS.mailSend, async (m) => {
    mails.push(m);
  });
  const owner = (await fixtures(bed.ctx()).admin({ role: 'owner' })).email;
  return {
    bed,
    mails,
    owner,
    stop: async () => {
      await stopMail();
      await bed.close();
    },
  };
}

let open: Mode;
let application: Mode;
beforeAll(async () => {
  open = await mode('open');
  application = await mode('application');
});
afterAll(async () => {
  await open?.stop();
  await application?.stop();
});

let n = 0;
const email = (tag: string) => `${tag}-${++n}@example.com`;
const registered = (m: Mode, address: string) =>
  m.bed.deps.db
    .selectFrom('events')
    .select('payload')
    .where('type', '=', 'client.registered')
    .where('payload', '@>', JSON.stringify({ email: address }) as never)
    .execute();
const register = (m: Mode, address: string) =>
  registerWithPassword(m.bed.deps, parseInput(RegisterInput, { email: address, password: 'a long customer password' }), {
    ip: '192.0.2.1',
  }).then((r) => r.answer);

/** The owner's mail about `address`, after the worker's events.dispatch ran. */
async function ownersMail(m: Mode, address: string): Promise<MailMessage> {
  await dispatchEvents(m.bed.deps);
  const find = () => m.mails.find((x) => x.to === m.owner && x.category === 'event:client.registered' && x.subject.endsWith(address));
  await until(`the owner's mail about ${address}`, () => find() !== undefined);
  return find() as MailMessage;
}

describe('client.registered in every registration mode', () => {
  it('an open-mode password registration raises client.registered (active, mode open) and mails the owner that a customer registered', async () => {
    const address = email('open');
    const answer = await register(open, address);
    expect(answer.status).toBe('active');
    expect((await registered(open, address)).map((e) => e.payload)).toEqual([
      { client_id: answer.id, email: address, status: 'active', method: 'password', registration_mode: 'open' },
    ]);
    const mail = await ownersMail(open, address);
    expect(mail.subject).toBe(`New customer registered: ${address}`);
    expect(mail.text).toContain('A customer registered (registration is open: they need no approval).');
    expect(mail.text).not.toContain('approve');
    expect(mail.text).toContain(`GET   https://cp.example.com/api/v1/clients/${answer.id}`);
  });

  it('an open-mode OAuth first sign-in raises client.registered (active, method oauth:<provider>, mode open) and signs in', async () => {
    const address = email('oauth-open');
    const outcome = await signInWithProfile(
      open.bed.deps,
      'client',
      'test',
      { provider_user_id: `u-${n}`, email: address, email_verified: true },
      { ip: '192.0.2.2' },
    );
    expect(outcome).toHaveProperty('pair');
    const [event] = await registered(open, address);
    expect(event?.payload).toMatchObject({ email: address, status: 'active', method: 'oauth:test', registration_mode: 'open' });
  });

  it('an application-mode registration raises client.registered (pending, mode application) and mails the owner that it waits for approval', async () => {
    const address = email('applicant');
    const answer = await register(application, address);
    expect(answer.status).toBe('pending');
    expect((await registered(application, address)).map((e) => e.payload)).toEqual([
      { client_id: answer.id, email: address, status: 'pending', method: 'password', registration_mode: 'application' },
    ]);
    const mail = await ownersMail(application, address);
    expect(mail.subject).toBe(`New registration waiting for approval: ${address}`);
    expect(mail.text).toContain('waits for your approval');
    expect(mail.text).toContain(`POST https://cp.example.com/api/v1/clients/${answer.id}/approve`);
  });

  it('an application-mode OAuth first sign-in raises client.registered (pending) and is refused until approved', async () => {
    const address = email('oauth-applicant');
    const outcome = await signInWithProfile(
      application.bed.deps,
      'client',
      'test',
      { provider_user_id: `u-${n}`, email: address, email_verified: true },
      { ip: '192.0.2.3' },
    );
    expect(outcome).toMatchObject({ refused: { reason: 'pending_approval' } });
    const [event] = await registered(application, address);
    expect(event?.payload).toMatchObject({ email: address, status: 'pending', method: 'oauth:test', registration_mode: 'application' });
  });

  it('a refused registration (the email is taken) raises nothing', async () => {
    const address = email('twice');
    await register(open, address);
    await expect(register(open, address)).rejects.toMatchObject({ type: 'conflict' });
    expect(await registered(open, address)).toHaveLength(1);
  });
});
