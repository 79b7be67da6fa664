import { formatDateTimeUtc, formatDuration, formatRelativeTime } from '@svc/format';
import { minorToDecimal } from '../billing/providers/money.ts';
import { retryAfterMs } from '../certificates/renewal-rule.ts';
import type { EventPayload } from '../events/catalogue.ts';
import type { MailMessage } from './queue-mail.ts';

export interface StoredEvent {
  id: string;
  type: string;
  payload: Record<string, unknown>;
  occurred_at: Date;
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: a subject is one line
const oneLine = (s: string, max = 150): string => s.replace(/[\u0000-\u001f\u007f]+/g, ' ').slice(0, max);

type Render = (payload: never, e: StoredEvent, baseUrl: string) => { subject: string; text: string };

/** A moment of an event's payload as every mail says it (@svc/format): "2027-01-01 00:00 UTC, in 3 days" from the event. */
const moment = (iso: string, e: StoredEvent): string => `${formatDateTimeUtc(iso)}, ${formatRelativeTime(new Date(iso), e.occurred_at)}`;

/** How each event type reads as a mail to an operator; a type without one gets the generic mail. */
const RENDERERS: { [T in string]?: Render } = {
  'client.registered': ((p: EventPayload<'client.registered'>, e: StoredEvent, baseUrl: string) => {
    const waiting = p.status === 'pending';
    const lines = [
      waiting
        ? 'A customer registered and waits for your approval.'
        : 'A customer registered (registration is open: they need no approval).',
      '',
      `Email:      ${oneLine(p.email, 320)}`,
      `Client id:  ${p.client_id}`,
      `Method:     ${oneLine(p.method, 60)}`,
      `At:         ${formatDateTimeUtc(e.occurred_at)}`,
      '',
    ];
    if (waiting)
      lines.push(
        'Approve or reject through the admin API:',
        `  POST ${baseUrl}/api/v1/clients/${p.client_id}/approve`,
        `  POST ${baseUrl}/api/v1/clients/${p.client_id}/reject`,
        '',
      );
    else
      lines.push(
        'Nothing waits for you. The client, and how to ban it if need be:',
        `  GET   ${baseUrl}/api/v1/clients/${p.client_id}`,
        `  PATCH ${baseUrl}/api/v1/clients/${p.client_id}  {"status":"disabled"}`,
        '',
      );
    lines.push(`Event ${e.id}`);
    return {
      subject: oneLine(`${waiting ? 'New registration waiting for approval' : 'New customer registered'}: ${p.email}`),
      text: lines.join('\n'),
    };
  }) as Render,
  'payment.awaiting_confirmation': ((p: EventPayload<'payment.awaiting_confirmation'>, e: StoredEvent, baseUrl: string) => {
    const money = `${minorToDecimal(p.amount, p.currency)} ${p.currency}`;
    const method = oneLine(p.provider_name, 100);
    const payment = `${baseUrl}/api/v1/payments/${p.payment_id}`;
    return {
      subject: oneLine(`Payment to confirm: ${money} from ${p.client_email} (${method})`),
      text: [
        `A customer chose to pay by ${method}, a manual payment method: nobody but you will confirm this payment.`,
        'When the money has arrived, confirm it: the plan is applied then. If it does not come, cancel it.',
        '',
        `Customer:    ${oneLine(p.client_email, 320)} (${p.client_id})`,
        `Plan:        ${oneLine(p.plan_name, 100)} (${p.plan_id})`,
        `For:         ${p.subscription_id ? `the subscription ${p.subscription_id}, extended` : 'a new subscription'}`,
        `Amount:      ${money}`,
        `Method:      ${method} (${p.provider_id})`,
        `Payment id:  ${p.payment_id}`,
        `Confirm by:  ${moment(p.expires_at, e)} (unconfirmed, it expires then; confirming later still applies the plan)`,
        '',
        'Confirm, cancel or look at it through the admin API:',
        `  POST ${payment}/confirm`,
        `  POST ${payment}/cancel`,
        `  GET  ${payment}`,
        '',
        `Event ${e.id}`,
      ].join('\n'),
    };
  }) as Render,
  'certificate.issue_failed': ((p: EventPayload<'certificate.issue_failed'>, e: StoredEvent, baseUrl: string) => {
    const names = oneLine(p.domains.join(', '), 200);
    return {
      subject: oneLine(`Certificate ${p.serving_until ? 'renewal' : 'issuance'} failed: ${names}`),
      text: [
        p.serving_until
          ? `The renewal of an ACME certificate failed. The current certificate keeps serving until ${moment(p.serving_until, e)}.`
          : 'The issuance of an ACME certificate failed; nothing is issued yet.',
        '',
        `Names:           ${names}`,
        `Certificate id:  ${p.certificate_id}`,
        `Failed attempts: ${p.failed_attempts} (the next in ${formatDuration(retryAfterMs(p.failed_attempts))}; never more than ${formatDuration(retryAfterMs(Number.MAX_SAFE_INTEGER))} apart)`,
        `Error:           ${oneLine(p.error, 1000)}`,
        '',
        'Check the DNS provider (POST /api/v1/dns-providers/{id}/check), then retry now:',
        `  POST ${baseUrl}/api/v1/certificates/${p.certificate_id}/renew`,
        '',
        `Event ${e.id}`,
      ].join('\n'),
    };
  }) as Render,
  'node.agent_upgrade_failed': ((p: EventPayload<'node.agent_upgrade_failed'>, e: StoredEvent, baseUrl: string) => ({
    subject: oneLine(`Node ${p.name}: the agent upgrade to ${p.version} failed`),
    text: [
      `The agent of the node ${oneLine(p.name, 100)} was asked to upgrade to svc-agent ${oneLine(p.version, 64)} and did not.`,
      `It runs svc-agent ${oneLine(p.agent_version, 64) || 'of an unknown version'}, serving as before.`,
      '',
      `Node:       ${oneLine(p.name, 100)} (${p.node_id})`,
      `The agent said: ${oneLine(p.error, 1000)}`,
      '',
      'Try again from the node page, or run the install command on the node (it upgrades in place):',
      `  POST ${baseUrl}/api/v1/nodes/${p.node_id}/upgrade-agent`,
      '',
      `Event ${e.id}`,
    ].join('\n'),
  })) as Render,
  'node.apply_failed': ((p: EventPayload<'node.apply_failed'>, e: StoredEvent, baseUrl: string) => {
    const node = `${baseUrl}/api/v1/nodes/${p.node_id}`;
    return {
      subject: oneLine(`Node ${p.name} failed to apply revision ${p.revision}`),
      text: [
        `The node ${oneLine(p.name, 100)} could not apply its desired state (revision ${p.revision}). It keeps serving`,
        `revision ${p.applied_revision}: what changed since (inbounds, users added or removed) is not in force on it,`,
        'and subscription links may name inbounds it does not run.',
        '',
        `Node:           ${oneLine(p.name, 100)} (${p.node_id})`,
        `Failed:         revision ${p.revision}`,
        `Running:        revision ${p.applied_revision}`,
        `Failing since:  ${formatDateTimeUtc(p.failing_since)}`,
        '',
        'The agent said:',
        // The engine's words keep their lines (a config error is often the last of several).
        ...textLines(p.error).map((l) => `  ${l}`),
        '',
        'Change what the engine refuses (the inbound or its profile): the next revision goes to the node at once.',
        'The node and its logs:',
        `  GET ${node}`,
        `  GET ${node}/logs?source=agent`,
        '',
        `This mail comes once per failed revision. Event ${e.id}`,
      ].join('\n'),
    };
  }) as Render,
};

// biome-ignore lint/suspicious/noControlCharactersInRegex: a text keeps its lines, nothing else of control
const textLines = (s: string): string[] => s.split('\n').map((l) => l.replace(/[\u0000-\u0008\u000b-\u001f\u007f]+/g, ' '));

/** The mail an owner (or admin) gets about `event`; `to` is theirs. */
export function eventMail(event: StoredEvent, to: string, baseUrl: string): MailMessage {
  const render = RENDERERS[event.type];
  const { subject, text } = render
    ? render(event.payload as never, event, baseUrl)
    : {
        subject: oneLine(`Event ${event.type}`),
        text: [
          `Event ${event.type} (${event.id}) at ${formatDateTimeUtc(event.occurred_at)}:`,
          '',
          JSON.stringify(event.payload, null, 2),
        ].join('\n'),
      };
  return { to, subject, text, category: `event:${event.type}` };
}
