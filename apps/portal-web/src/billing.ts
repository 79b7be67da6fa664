import { useQuery } from '@tanstack/react-query';
import { api, type PortalSchemas, unwrap } from './api.ts';

export type Plan = PortalSchemas['PortalPlan'];
export type PaymentMethod = PortalSchemas['PortalPaymentMethod'];
export type Payment = PortalSchemas['PortalPayment'];

type ListPath = '/portal/v1/plans' | '/portal/v1/payment-methods' | '/portal/v1/payments';
type ItemOf<P extends ListPath> = P extends '/portal/v1/plans' ? Plan : P extends '/portal/v1/payment-methods' ? PaymentMethod : Payment;

/**
 * Every page of a portal list (oldest first, keyset by id), 200 at a time. A customer's plans,
 * methods and payments are tens, not thousands; ten pages is where reading stops (what is shown
 * is what was read).
 */
async function everyPage<P extends ListPath>(path: P): Promise<ItemOf<P>[]> {
  const items: ItemOf<P>[] = [];
  let cursor: string | undefined;
  for (let pages = 0; pages < 10; pages++) {
    const query = { limit: 200, ...(cursor ? { cursor } : {}) };
    const page = (await unwrap(api.GET(path as '/portal/v1/plans', { params: { query } }))) as unknown as {
      items: ItemOf<P>[];
      next_cursor: string | null;
    };
    items.push(...page.items);
    if (!page.next_cursor) break;
    cursor = page.next_cursor;
  }
  return items;
}

/** Plans on sale. */
export const usePlans = () => useQuery({ queryKey: ['/portal/v1/plans'], queryFn: () => everyPage('/portal/v1/plans') });

/** Enabled payment methods. */
export const usePaymentMethods = () =>
  useQuery({ queryKey: ['/portal/v1/payment-methods'], queryFn: () => everyPage('/portal/v1/payment-methods') });

/** The customer's payments, newest first. */
export const usePayments = () =>
  useQuery({ queryKey: ['/portal/v1/payments'], queryFn: async () => (await everyPage('/portal/v1/payments')).reverse() });

/** The customer and their subscriptions (GET /portal/v1/me): one cache entry for every screen. */
export const useMe = () => useQuery({ queryKey: ['/portal/v1/me'], queryFn: () => unwrap(api.GET('/portal/v1/me')) });

/** A payment that is still waited for; every other status is where it ends (refunded after succeeded). */
export const isSettled = (p: Pick<Payment, 'status'>) => p.status !== 'pending';

export const PAYMENT_STATUS_COLOR: Record<Payment['status'], string> = {
  pending: 'yellow',
  succeeded: 'teal',
  failed: 'red',
  expired: 'gray',
  canceled: 'gray',
  refunded: 'grape',
};

/**
 * The provider's page a checkout sends the payer to, when it is one a browser should open: an
 * http(s) URL only (never javascript: or data:, whatever a provider or a proxy answered).
 */
export function providerPage(url: string | null): string | null {
  if (!url) return null;
  try {
    const u = new URL(url);
    return u.protocol === 'https:' || u.protocol === 'http:' ? u.toString() : null;
  } catch {
    return null;
  }
}
