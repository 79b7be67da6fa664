/**
 * The Idempotency-Key of a purchase (POST /portal/v1/checkout): made once when the customer first
 * presses "Pay" for a plan, a payment method and (when renewing) a subscription, and sent again
 * on every retry of that same purchase (a lost answer, a server away, a reload of the page), so
 * the server makes one payment however often the request goes out. Kept in sessionStorage (this
 * tab) until the checkout is answered; then the next purchase gets a new key. Another method or
 * plan is another purchase, so another key (the same key with another body would be refused).
 */
export interface Purchase {
  plan_id: string;
  provider_id: string;
  subscription_id?: string;
}

const PREFIX = 'svc-portal-checkout:';
const slot = (p: Purchase) => `${PREFIX}${p.plan_id}:${p.provider_id}:${p.subscription_id ?? ''}`;

function storage(): Storage | null {
  try {
    return window.sessionStorage;
  } catch {
    return null;
  }
}

// Where sessionStorage is refused (a locked-down browser), the key lives as long as the page.
const inMemory = new Map<string, string>();

/** A random UUID; randomUUID exists only in a secure context (https or localhost), getRandomValues everywhere. */
function newKey(): string {
  if (typeof crypto.randomUUID === 'function') return crypto.randomUUID();
  const b = crypto.getRandomValues(new Uint8Array(16));
  b[6] = ((b[6] as number) & 0x0f) | 0x40;
  b[8] = ((b[8] as number) & 0x3f) | 0x80;
  const h = [...b].map((x) => x.toString(16).padStart(2, '0')).join('');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/** This purchase's key: the one made before when it is being retried, else a new one. */
export function attemptKey(p: Purchase): string {
  const store = storage();
  const name = slot(p);
  const kept = store?.getItem(name) ?? inMemory.get(name);
  if (kept) return kept;
  const key = newKey();
  store?.setItem(name, key);
  inMemory.set(name, key);
  return key;
}

/** The purchase was answered (a checkout exists): its key is spent. */
export function attemptDone(p: Purchase): void {
  const name = slot(p);
  storage()?.removeItem(name);
  inMemory.delete(name);
}
