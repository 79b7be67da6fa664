import type { CertificateRow } from '@svc/db';

/**
 * A certificate as the admin API shows it. Status: uploaded certificates are `active`; ACME
 * certificates are `pending` until the first issuance, then `issued`, or `failed` when the
 * first issuance failed (last_error says why; a failed renewal keeps `issued` and the old
 * material serving, with last_error set).
 */
export interface CertificateView {
  id: string;
  name: string | null;
  kind: CertificateRow['kind'];
  status: string;
  domains: string[];
  issuer: string | null;
  not_before: string | null;
  not_after: string | null;
  cert_pem: string | null;
  /** The key itself is write-only. */
  has_key: boolean;
  /** ACME: the account and the DNS provider issuance uses. */
  acme_account_id: string | null;
  dns_provider_id: string | null;
  /** Why the last issuance or renewal failed (null after a success). */
  last_error: string | null;
  /** ACME: whether a worker is issuing right now, when the next attempt is due (issuance, retry or renewal), when the last one started, how many failed in a row. */
  issuing: boolean;
  next_attempt_at: string | null;
  last_attempt_at: string | null;
  failed_attempts: number;
  created_at: string;
  updated_at: string;
}

const iso = (d: Date | null) => d?.toISOString() ?? null;

export const certificateView = (r: CertificateRow): CertificateView => ({
  id: r.id,
  name: r.name,
  kind: r.kind,
  status: r.status,
  domains: r.domains as string[],
  issuer: r.issuer,
  not_before: iso(r.not_before),
  not_after: iso(r.not_after),
  cert_pem: r.cert_pem,
  has_key: r.key_pem_enc !== null,
  acme_account_id: r.acme_account_id,
  dns_provider_id: r.dns_provider_id,
  last_error: r.last_error,
  issuing: r.issuing_since !== null,
  next_attempt_at: iso(r.next_attempt_at),
  last_attempt_at: iso(r.last_attempt_at),
  failed_attempts: r.failed_attempts,
  created_at: r.created_at.toISOString(),
  updated_at: r.updated_at.toISOString(),
});
