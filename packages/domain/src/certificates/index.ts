// Use cases of this feature, exported for every surface.

export * from './announce-expiring.ts';
export type { CertificateView } from './certificate.ts';
export { CreateCertificateInput, createCertificate } from './create-certificate.ts';
export { deleteCertificate } from './delete-certificate.ts';
export { enqueueDueIssuance } from './enqueue-due-issuance.ts';
export { type IssueOptions, type IssueOutcome, issueAcmeCertificate } from './issue-acme-certificate.ts';
export { type CertificateFilter, getCertificate, listCertificates } from './read-certificates.ts';
export { renewCertificate } from './renew-certificate.ts';
export { claimStaleMs, ISSUING_CLAIM_STALE_MS, nextRenewalAt, RENEW_BEFORE_DAYS, renewalDueAt, retryAfterMs } from './renewal-rule.ts';
export { UpdateCertificateInput, updateCertificate } from './update-certificate.ts';
