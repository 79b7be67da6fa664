import { z } from 'zod';

/** Fields of a certificate that create and update share. */

/** Trimmed; empty means no name. */
export const CertificateName = z
  .string()
  .max(100)
  .transform((name) => name.trim() || null);

export const CertPem = z.string().min(1).max(65536).meta({ description: 'PEM chain, leaf first' });
export const KeyPem = z
  .string()
  .min(1)
  .max(16384)
  .meta({ writeOnly: true, description: 'PEM private key of the leaf (unencrypted); never returned' });
/** Names the certificate covers; whether it does is checked against the certificate itself (pem.ts). */
export const Domains = z
  .array(z.string().min(1).max(253))
  .max(100)
  .meta({ description: 'names the certificate covers; default: its DNS subjectAltNames' });
