import type { PaymentRow } from '@svc/db';
import { formatDateTimeUtc, formatRelativeTime } from '@svc/format';
import { minorToDecimal } from '../billing/providers/money.ts';
import type { MailMessage } from '../notifications/queue-mail.ts';

// biome-ignore lint/suspicious/noControlCharactersInRegex: a subject is one line
const oneLine = (s: string, max = 120): string => s.replace(/[\u0000-\u001f\u007f]+/g, ' ').slice(0, max);

/**
 * The mail a customer gets when their payment succeeded or was refunded: what it bought and
 * until when, the moment and how far it is in @svc/format's words ("until 2027-01-01 00:00 UTC
 * (in 30 days)", as the /sub page says it). Plain text, from fields we wrote (the plan's name
 * is an operator's text, kept on one line in the subject).
 */
export function paymentMail(
  to: string,
  payment: Pick<PaymentRow, 'id' | 'amount' | 'currency' | 'status'>,
  planName: string,
  /** The subscription's expiry (null: never); undefined when the payment has no subscription. */
  expiresAt: Date | null | undefined,
  now: Date,
): MailMessage {
  const money = `${minorToDecimal(Number(payment.amount), payment.currency)} ${payment.currency}`;
  const until =
    expiresAt === undefined
      ? ''
      : expiresAt === null
        ? 'Your subscription does not expire.'
        : expiresAt.getTime() > now.getTime()
          ? `Your subscription now runs until ${formatDateTimeUtc(expiresAt)} (${formatRelativeTime(expiresAt, now)}).`
          : `Your subscription has ended (${formatDateTimeUtc(expiresAt)}).`;
  if (payment.status === 'refunded') {
    return {
      to,
      subject: oneLine(`Refund: ${planName}`),
      text: [
        `Your payment of ${money} for ${oneLine(planName)} was refunded.`,
        '',
        ...(until ? [until, ''] : []),
        `Payment ${payment.id}`,
      ].join('\n'),
      category: 'payment_refunded',
    };
  }
  return {
    to,
    subject: oneLine(`Payment received: ${planName}`),
    text: [
      `Thank you: your payment of ${money} for ${oneLine(planName)} went through.`,
      '',
      ...(until ? [until, ''] : []),
      `Payment ${payment.id}`,
    ].join('\n'),
    category: 'payment_succeeded',
  };
}
