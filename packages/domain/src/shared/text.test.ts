import { describe, expect, it } from 'vitest';
import { CreateNodeInput } from '../nodes/create-node.ts';
import { parseInput } from './input.ts';
import { findUnstorableText, isStorableText, TEXT_RULE } from './text.ts';

describe('the text rule: no NUL and no unpaired surrogate reaches storage', () => {
  it('refuses NUL and lone surrogates (high or low), accepts every other character including pairs, RTL marks and controls', () => {
    for (const bad of ['x\u0000y', '\u0000', 'x\ud800y', 'x\udc00', '\ud800', 'a\udfff\ud800b'])
      expect(isStorableText(bad), JSON.stringify(bad)).toBe(false);
    for (const good of ['', 'plain', '😀', '\ud83d\ude00', '\u202e\u200f', '\t\n\u0001\u007f', 'ü'.repeat(1000)])
      expect(isStorableText(good)).toBe(true);
  });

  it('names the first offending string by its path through objects and arrays, and an offending key by its object', () => {
    expect(findUnstorableText({ a: 'ok', b: [{ c: 'ok' }, { d: 'bad\u0000' }] })).toBe('b.1.d');
    expect(findUnstorableText('x\ud800')).toBe('(body)');
    expect(findUnstorableText({ nested: { 'k\u0000': 'v' } })).toBe('nested');
    expect(findUnstorableText({ 'k\ud800': 1 })).toBe('(body)');
    expect(findUnstorableText({ n: 1, b: true, z: null, s: ['fine'] })).toBeNull();
  });

  it('is linear: a megabyte of text is checked in one pass', () => {
    expect(isStorableText('a'.repeat(1 << 20))).toBe(true);
    expect(isStorableText(`${'a'.repeat(1 << 20)}\ud800`)).toBe(false);
  });

  it('parseInput refuses it before the schema, naming the field', () => {
    expect(() => parseInput(CreateNodeInput, { name: 'n\u0000', address: 'a.example.net' })).toThrow(
      expect.objectContaining({ type: 'validation', errors: { name: TEXT_RULE } }),
    );
  });
});
