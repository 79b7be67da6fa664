import type { CertificateRow } from '@svc/db';

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
  created_at: string;
  updated_at: string;
}

export const certificateView = (r: CertificateRow): CertificateView => ({
  id: r.id,
  name: r.name,
  kind: r.kind,
  status: r.status,
  domains: r.domains as string[],
  issuer: r.issuer,
  not_before: r.not_before?.toISOString() ?? null,
  not_after: r.not_after?.toISOString() ?? null,
  cert_pem: r.cert_pem,
  has_key: r.key_pem_enc !== null,
  created_at: r.created_at.toISOString(),
  updated_at: r.updated_at.toISOString(),
});
