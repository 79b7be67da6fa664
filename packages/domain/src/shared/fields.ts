import { z } from 'zod';

/**
 * Input fields that several resources share (names, references, ports): one rule each,
 * whichever resource takes it.
 */

/** A name as an operator types it: trimmed, 1-`max` characters. */
export const trimmedName = (max: number) => {
  const length = `must be 1-${max} characters`;
  return z.string().trim().min(1, length).max(max, length);
};

/** A name that also shows up in logs and Xray configs: no control characters either. */
export const labelName = (max: number) =>
  trimmedName(max)
    // biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point
    .refine((n) => !/[\u0000-\u001f\u007f]/.test(n), 'must not contain control characters');

/**
 * Text an operator writes for customers (a plan's description): trimmed, at most `max`
 * characters, line breaks and tabs kept, no other control character (nor a carriage return:
 * a line ends with \n).
 */
export const plainText = (max: number) =>
  z
    .string()
    .trim()
    .max(max, `must be at most ${max} characters`)
    // biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point
    .refine((v) => !/[\u0000-\u0008\u000b-\u001f\u007f]/.test(v), 'must not contain control characters');

/** The id of another row the input refers to (whether it exists is the use case's question). */
export const RefId = z.string().min(1).max(64);

/** A TCP/UDP port a node listens on (an inbound, or a chain hop's chain-in). */
export const Port = z.number().int().min(1).max(65535);

/** A list whose repeats mean nothing, without them (first occurrence kept). */
export const unique = <T>(values: readonly T[]): T[] => [...new Set(values)];
