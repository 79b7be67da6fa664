/**
 * Whether an Accept-Encoding value (RFC 9110 12.5.3) takes gzip: `gzip` (or `x-gzip`) listed
 * with a q above 0, or `*` above 0 with gzip not listed. Read in one pass without a pattern
 * (the header is the caller's); a value longer than any client sends is read as absent, which
 * leaves the identity answer, always acceptable.
 */
export function acceptsGzip(value: string | undefined): boolean {
  if (value === undefined || value.length === 0 || value.length > MAX_LENGTH) return false;
  let gzip: boolean | undefined;
  let any: boolean | undefined;
  for (const item of value.split(',')) {
    const semi = item.indexOf(';');
    const name = (semi === -1 ? item : item.slice(0, semi)).trim().toLowerCase();
    if (name !== 'gzip' && name !== 'x-gzip' && name !== '*') continue;
    const ok = semi === -1 || qualityAboveZero(item.slice(semi + 1));
    if (name === '*') any = ok;
    else gzip = gzip === true || ok;
  }
  return gzip ?? any ?? false;
}

const MAX_LENGTH = 1024;

/** The parameters after a coding: false when q is 0 (0, 0.0, 0.000), true for any other q or none. */
function qualityAboveZero(params: string): boolean {
  for (const param of params.split(';')) {
    const eq = param.indexOf('=');
    if (eq === -1 || param.slice(0, eq).trim().toLowerCase() !== 'q') continue;
    const q = param.slice(eq + 1).trim();
    // qvalue = ( "0" [ "." 0*3DIGIT ] ) / ( "1" [ "." 0*3("0") ] ): zero only when every digit is.
    return !(q.length > 0 && q.length <= 5 && q[0] === '0' && (q.length === 1 || (q[1] === '.' && /^0*$/.test(q.slice(2)))));
  }
  return true;
}
