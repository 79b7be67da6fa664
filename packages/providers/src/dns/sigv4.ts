import { createHash, createHmac } from 'node:crypto';

/**
 * AWS Signature Version 4 (header form) on node:crypto, for the few Route 53 calls DNS-01
 * makes: no AWS SDK for four requests. Checked against the published AWS test vectors.
 */

export interface SigV4Key {
  accessKeyId: string;
  secretAccessKey: string;
  /** The signing region (Route 53 is global and signs with us-east-1). */
  region: string;
  service: string;
}

export interface SigV4Request {
  method: string;
  url: URL;
  /** Every header to sign, `host` and `x-amz-date` among them (any case). */
  headers: Readonly<Record<string, string>>;
  body: string;
}

export interface SigV4Signature {
  canonicalRequest: string;
  stringToSign: string;
  signedHeaders: string;
  signature: string;
  /** The Authorization header's value. */
  authorization: string;
}

const sha256Hex = (data: string) => createHash('sha256').update(data, 'utf8').digest('hex');
const hmac = (key: Buffer | string, data: string) => createHmac('sha256', key).update(data, 'utf8').digest();

/** RFC 3986 unreserved characters stay, everything else is %XX (upper case), as SigV4 wants. */
const strictEncode = (s: string) =>
  encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`);

/** `20150830T123600Z`: the time SigV4 signs (x-amz-date). */
export const amzDate = (d: Date): string =>
  d
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}/, '');

/**
 * Each segment of the path as sent, encoded again: SigV4 for every service but S3 signs the
 * path encoded twice.
 */
const canonicalUri = (url: URL) => (url.pathname || '/').split('/').map(strictEncode).join('/');

/** Query parameters encoded and sorted by name, then value (code point order). */
function canonicalQuery(url: URL): string {
  const pairs = [...url.searchParams].map(([k, v]) => [strictEncode(k), strictEncode(v)] as const);
  pairs.sort(([ak, av], [bk, bv]) => (ak < bk ? -1 : ak > bk ? 1 : av < bv ? -1 : av > bv ? 1 : 0));
  return pairs.map(([k, v]) => `${k}=${v}`).join('&');
}

export function sigV4(req: SigV4Request, key: SigV4Key): SigV4Signature {
  const headers = new Map<string, string>();
  for (const [name, value] of Object.entries(req.headers)) headers.set(name.toLowerCase(), value.trim().replace(/ +/g, ' '));
  const date = headers.get('x-amz-date');
  if (!date || !/^\d{8}T\d{6}Z$/.test(date)) throw new Error('SigV4: the x-amz-date header is missing or malformed');
  const names = [...headers.keys()].sort();
  const signedHeaders = names.join(';');
  const canonicalRequest = [
    req.method,
    canonicalUri(req.url),
    canonicalQuery(req.url),
    names.map((n) => `${n}:${headers.get(n)}\n`).join(''),
    signedHeaders,
    sha256Hex(req.body),
  ].join('\n');
  const scope = `${date.slice(0, 8)}/${key.region}/${key.service}/aws4_request`;
  const stringToSign = ['AWS4-HMAC-SHA256', date, scope, sha256Hex(canonicalRequest)].join('\n');
  const signingKey = hmac(hmac(hmac(hmac(`AWS4${key.secretAccessKey}`, date.slice(0, 8)), key.region), key.service), 'aws4_request');
  const signature = createHmac('sha256', signingKey).update(stringToSign, 'utf8').digest('hex');
  return {
    canonicalRequest,
    stringToSign,
    signedHeaders,
    signature,
    authorization: `AWS4-HMAC-SHA256 Credential=${key.accessKeyId}/${scope}, SignedHeaders=${signedHeaders}, Signature=${signature}`,
  };
}

/**
 * The headers that sign a request made at `now`: `headers` plus x-amz-date and Authorization.
 * Host is signed as the URL names it and left for fetch to send.
 */
export function sigV4Headers(
  method: string,
  url: URL,
  body: string,
  headers: Readonly<Record<string, string>>,
  key: SigV4Key,
  now: Date,
): Record<string, string> {
  const signed = { ...headers, 'x-amz-date': amzDate(now) };
  const { authorization } = sigV4({ method, url, body, headers: { ...signed, host: url.host } }, key);
  return { ...signed, authorization };
}
