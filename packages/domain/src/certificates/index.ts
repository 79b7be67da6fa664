// Use cases of this feature, exported for every surface.

export * from './announce-expiring.ts';
export type { CertificateView } from './certificate.ts';
export { ACME_NOT_AVAILABLE, CreateCertificateInput, createCertificate } from './create-certificate.ts';
export { deleteCertificate } from './delete-certificate.ts';
export { type CertificateFilter, getCertificate, listCertificates } from './read-certificates.ts';
export { UpdateCertificateInput, updateCertificate } from './update-certificate.ts';
