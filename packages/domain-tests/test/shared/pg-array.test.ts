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

  it('int8 values from -2^63 to 2^63-1 come back exactly; one outside int8 fails the cast, it is never cut or wrapped', async () => {
    const values = [0n, -1n, 9_223_372_036_854_775_807n, -9_223_372_036_854_775_808n, 1_125_899_906_842_624n];
    const got = (await sql<{ a: string[] }>`select ${int8Array(values)}::text[] as a`.execute(bed.deps.db)).rows[0]?.a;
    expect(got).toEqual(values.map(String));
    expect((await sql<{ a: string[] }>`select ${int8Array([])}::text[] as a`.execute(bed.deps.db)).rows[0]?.a).toEqual([]);
    await expect(sql`select ${int8Array([2n ** 63n])}`.execute(bed.deps.db)).rejects.toThrow(/out of range/);
  });
});
