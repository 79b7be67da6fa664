import { isIP } from 'node:net';
import { z } from 'zod';
import { normalizeNodeAddress } from '../nodes/node-fields.ts';
import { normalizedBy } from '../shared/input.ts';

/** Fields of an inbound that create and update share. */

export const Listen = z
  .string()
  .max(64)
  .refine((l) => isIP(l) !== 0, 'must be an IP address literal (e.g. 0.0.0.0 or ::)')
  .meta({ description: 'IP literal to listen on; default all addresses', example: '0.0.0.0' });

/** The host clients connect to: the same rule (and normal form) as a node's address. */
export const InboundHost = z
  .string()
  .max(253)
  .transform(normalizedBy((host: string) => normalizeNodeAddress(host, 'host')))
  .meta({ description: 'host clients connect to; overrides the node address in client links' });
