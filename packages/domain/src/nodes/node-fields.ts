import { isIP } from 'node:net';
import { z } from 'zod';
import { ValidationError } from '../errors.ts';
import { asciiLowerCase } from '../shared/ascii-case.ts';
import { labelName } from '../shared/fields.ts';
import { normalizedBy } from '../shared/input.ts';

export const NODE_NAME_MAX = 64;

const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/**
 * The host clients (and the previous hop of a chain) connect to: an IPv4 or IPv6 literal
 * (IPv6 with or without brackets, stored without) or a DNS name (RFC 1123 labels, at most
 * 253 characters, stored lower case without a trailing dot). No scheme, port or path.
 */
export function normalizeNodeAddress(address: string, field = 'address'): string {
  const invalid = (reason: string) => new ValidationError('invalid node address', { [field]: reason });
  let a = address.trim();
  if (a.startsWith('[') && a.endsWith(']')) {
    a = a.slice(1, -1);
    if (isIP(a) !== 6) throw invalid('brackets are only for an IPv6 literal');
  }
  if (isIP(a) === 4) return a;
  if (isIP(a) === 6) return a.toLowerCase();
  a = asciiLowerCase(a).replace(/\.$/, '');
  if (a.length === 0 || a.length > 253) throw invalid('must be a DNS name (at most 253 characters) or an IP address');
  const labels = a.split('.');
  if (!labels.every((l) => LABEL.test(l)))
    throw invalid(
      'must be a DNS name (letters, digits and hyphens in dot-separated labels of 1-63) or an IP address, without scheme or port',
    );
  if (/^[0-9]+$/.test(labels[labels.length - 1] as string)) throw invalid('is neither a valid IP address nor a DNS name');
  return a;
}

/** A node's name, as every surface accepts it: trimmed, 1-64 characters, no control characters. */
export const NodeName = labelName(NODE_NAME_MAX).meta({ example: 'fra-1' });

/** The host clients connect to, as every surface accepts it (see normalizeNodeAddress). */
export const NodeAddress = z
  .string()
  .max(260)
  .transform(normalizedBy((address: string) => normalizeNodeAddress(address)))
  .meta({
    description: 'Host clients connect to: a DNS name or an IPv4/IPv6 literal (no scheme or port)',
    example: 'fra-1.example.net',
  });

export const AdminStatus = z.enum(['enabled', 'disabled']);
