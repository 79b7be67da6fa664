import { z } from 'zod';
import { trimmedName, unique } from '../shared/fields.ts';
import { DEFAULT_SNIFFING, PROTOCOLS, SHADOWSOCKS_METHODS, SNIFF_DESTS, VLESS_FLOWS } from './profile.ts';

/** Fields of an inbound profile that create and update share (the stream's are in stream-fields.ts). */

export const ProfileName = trimmedName(100);
export const Protocol = z.enum(PROTOCOLS);
export const VlessFlow = z.enum(VLESS_FLOWS).meta({ description: 'vless over tcp with tls or reality only' });
export const ShadowsocksMethod = z.enum(SHADOWSOCKS_METHODS).meta({ description: 'required for (and only for) shadowsocks' });

/** Absent fields: the defaults on create, the current values on update (merged field by field). */
export const SniffingInput = z
  .object({
    enabled: z.boolean().optional().meta({ default: DEFAULT_SNIFFING.enabled }),
    dest_override: z.array(z.enum(SNIFF_DESTS)).max(4).transform(unique).optional().meta({ default: DEFAULT_SNIFFING.dest_override }),
    route_only: z.boolean().optional().meta({ default: DEFAULT_SNIFFING.route_only }),
  })
  .strict()
  .meta({ id: 'SniffingInput' });
export type SniffingInput = z.output<typeof SniffingInput>;
