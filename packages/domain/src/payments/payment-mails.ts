import type { PaymentRow } from '@svc/db';
import { minorToDecimal } from '../billing/providers/money.ts';
import type { MailMessage } from '../notifications/queue-mail.ts';

// biome-ignore lint/suspicious/noControlCharactersInRegex: a subject is one line
const oneLine = (s: string, max = 120): string => s.replace(/[\u0000-\u001f\u007f]+/g, ' ').slice(0, max);

/**
 * The mail a customer gets when their payment succeeded or was refunded: what it bought and
 * until when. Plain text, from fields we wrote (the plan's name is an operator's text, kept on
 * one line in the subject).
 */
export function paymentMail(
  to: string,
  payment: Pick<PaymentRow, 'id' | 'amount' | 'currency' | 'status'>,
  planName: string,
  /** The subscription's expiry (null: never); undefined when the payment has no subscription. */
  expiresAt: string | null | undefined,
): MailMessage {
  const money = `${minorToDecimal(Number(payment.amount), payment.currency)} ${payment.currency}`;
  const until = expiresAt
    ? `Your subscription now runs until ${expiresAt.replace('T', ' ').slice(0, 16)} UTC.`
    : 'Your subscription does not expire.';
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
