import { z } from 'zod';
import { asciiLowerCase } from '../shared/ascii-case.ts';

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

/**
 * Names an ACME certificate is issued for: host names, a wildcard only as the whole leftmost
 * label (`*.example.com`, DNS-01 validates it), lower-cased and without duplicates. Each label
 * is checked on its own (no pattern runs over the whole name).
 */
export const AcmeDomains = z
  .array(
    z
      .string()
      .min(1)
      .max(253)
      .transform((d) => asciiLowerCase(d.trim()).replace(/\.$/, ''))
      .refine(isAcmeName, 'must be a DNS name (example.com) or a wildcard (*.example.com)'),
  )
  .min(1)
  .max(100)
  .transform((names) => [...new Set(names)])
  .meta({ description: 'kind acme: the names to issue for (a wildcard as *.example.com); each validated over DNS-01' });

const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
function isAcmeName(name: string): boolean {
  const labels = name.split('.');
  if (labels.length < 2 || name.length > 253) return false;
  return labels.every((l, i) => (i === 0 && l === '*') || LABEL.test(l)) && !/^\d+$/.test(labels[labels.length - 1] as string);
}
