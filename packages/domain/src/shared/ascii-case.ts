/**
 * Lower-cases the ASCII letters of a name and nothing else. String#toLowerCase folds some
 * non-ASCII characters onto ASCII ones (U+212A KELVIN SIGN becomes "k"), so a name checked
 * after it could equal another one it does not look like; with this the non-ASCII character
 * stays and the name's own check refuses it. For names whose rules are ASCII: host names,
 * DNS labels (email addresses have their own rule in auth/credential-fields.ts).
 */
export const asciiLowerCase = (s: string): string => s.replace(/[A-Z]+/g, (m) => m.toLowerCase());
