import fc from 'fast-check';

/**
 * Text an attacker sends (issue 12): what the text rule refuses (NUL, lone surrogates, a pair
 * in the wrong order) beside what it must let through (bidi controls, a BOM inside a string,
 * lone combining marks, emoji sequences, the last code points), for property tests of every
 * surface.
 */
export const HOSTILE_SPECIALS = [
  '\u0000', // NUL
  '\ud800', // lone high surrogate
  '\udfff', // lone low surrogate
  '\udc00\ud800', // a pair in the wrong order: two lone surrogates
  '\u202e', // right-to-left override
  '\u200f', // right-to-left mark
  '\u2066', // left-to-right isolate
  '\ufeff', // byte-order mark inside a string
  '\u0301', // combining mark with nothing to combine with
  '😀',
  '👩‍👩‍👧',
  '\uffff',
  '\u{10ffff}',
] as const;

/** About 1 MB each: over and under a 1 MiB body limit once encoded, one with a NUL at the end. */
export const HOSTILE_MEGA = [`\u202e${'x'.repeat(1 << 20)}`, 'é'.repeat(500_000), `${'a'.repeat(999_990)}\u0000`] as const;

/** Random text around a hostile code unit, arbitrary UTF-16, or (rarely) a 1 MB string. */
export const hostileText = (opts: { mega?: boolean } = {}): fc.Arbitrary<string> =>
  fc.oneof(
    {
      weight: 8,
      arbitrary: fc
        .tuple(
          fc.string({ unit: 'grapheme', maxLength: 6 }),
          fc.constantFrom(...HOSTILE_SPECIALS),
          fc.string({ unit: 'binary', maxLength: 6 }),
        )
        .map(([a, b, c]) => a + b + c),
    },
    { weight: 3, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 24 }) },
    { weight: opts.mega === false ? 0 : 1, arbitrary: fc.constantFrom(...HOSTILE_MEGA) },
  );

/**
 * Percent-encodes text for a URL path segment or query value, lone surrogates included (as
 * the three bytes a careless encoder writes, which do not decode as UTF-8);
 * encodeURIComponent throws on them.
 */
export function encodeHostileSegment(text: string): string {
  let out = '';
  for (const ch of text) {
    const cp = ch.codePointAt(0) as number;
    if (cp >= 0xd800 && cp <= 0xdfff) {
      out += [0xe0 | (cp >> 12), 0x80 | ((cp >> 6) & 0x3f), 0x80 | (cp & 0x3f)].map((b) => `%${b.toString(16).toUpperCase()}`).join('');
    } else out += encodeURIComponent(ch);
  }
  return out;
}

/**
 * Emails a provider (or a form) may hand over that must never become an account's address
 * (issue 29 item 5): markup, header injection, lists and groups, display names, spaces,
 * quoted and commented local parts, address literals, letters that fold onto ASCII (the Kelvin
 * sign lower-cases to 'k'; fullwidth letters NFKC-fold), invisible characters, over-long.
 */
export const MALFORMED_EMAILS = [
  '<img src=x onerror=alert(1)>@example.com',
  '"><script>alert(1)</script>@example.com',
  'mallory@example.com\r\nbcc: everyone@example.com',
  'mallory@example.com\nbcc:everyone@example.com',
  'mallory@example.com, carol@example.com',
  'friends: mallory@example.com, carol@example.com;',
  'Mallory <mallory@example.com>',
  'mallory smith@example.com',
  '"mallory smith"@example.com',
  'mallory(comment)@example.com',
  'mallory@[127.0.0.1]',
  'mallory@localhost',
  '\u212Aarol@example.com',
  'ｍallory@example.com',
  'mallory@exa\u0307mple.com',
  'mallory\u200b@example.com',
  `${'m'.repeat(250)}@example.com`,
  'mallory@@example.com',
] as const;
