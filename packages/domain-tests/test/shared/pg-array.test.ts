import { int8Array, textArray } from '@svc/domain';
import { createDomainTestbed, type DomainTestbed } from '@svc/testkit';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// The array literals the usage staging sends (shared/pg-array.ts), read back by the real server.

let bed: DomainTestbed;
beforeAll(async () => {
  bed = await createDomainTestbed();
});
afterAll(() => bed.close());

const roundTrip = async (values: string[]) =>
  (await sql<{ a: string[] }>`select ${textArray(values)} as a`.execute(bed.deps.db)).rows[0]?.a;

describe('textArray / int8Array: one literal, read back as sent', () => {
  it('every text comes back as it was, specials of the literal syntax included, in order and count', async () => {
    const values = [
      '',
      'plain',
      'a"b',
      'c\\d',
      '"',
      '\\',
      '\\"',
      'e,f',
      '{g}',
      '{',
      '}',
      'NULL',
      'null',
      ' h ',
      '\t',
      '\n',
      '日本語',
      '🚀',
      'x'.repeat(64),
    ];
    expect(await roundTrip(values)).toEqual(values);
    expect(await roundTrip([])).toEqual([]);
    expect(await roundTrip(['NULL'])).toEqual(['NULL']);
  });

  it('int8 values from -2^63 to 2^63-1 come back exactly; anything but a decimal integer is refused before it is sent', async () => {
    const values = ['0', '-1', '9223372036854775807', '-9223372036854775808', '1125899906842624'];
    const got = (await sql<{ a: string[] }>`select ${int8Array(values)}::text[] as a`.execute(bed.deps.db)).rows[0]?.a;
    expect(got).toEqual(values);
    for (const bad of ['', '-', '1.5', '1e3', ' 1', '1,2', '}', '{1}', '0x10', '12345678901234567890'])
      expect(() => int8Array([bad]), bad).toThrow(/int8/);
  });
});
