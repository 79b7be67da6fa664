/**
 * The address an imported client gets when the source knows none (Marzban and 3x-ui users have
 * only a name): `<name>@<source>.import.invalid`. The `.invalid` top-level domain never
 * resolves (RFC 2606), so no mail reaches a stranger; the operator replaces it with the
 * customer's real address, which is what lets the customer sign in to the portal.
 */
export const IMPORTED_EMAIL_DOMAIN = 'import.invalid';

const slug = (text: string, fallback: string): string => {
  const s = text
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, '-')
    .replace(/^[.-]+|[.-]+$/g, '')
    .slice(0, 48);
  return s === '' ? fallback : s;
};

/** The placeholder address of `username` from source `sourceName`; `n` > 0 when an earlier choice was taken. */
export function importedClientEmail(sourceName: string, username: string, n = 0): string {
  const local = slug(username, 'user');
  return `${n > 0 ? `${local}-${n}` : local}@${slug(sourceName, 'source')}.${IMPORTED_EMAIL_DOMAIN}`;
}
