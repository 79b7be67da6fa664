import { type KeyObject, verify } from 'node:crypto';

export interface VerifiedJwt {
  header: { alg: string; kid?: string; typ?: string };
  payload: Record<string, unknown>;
}

export class JwtError extends Error {
  constructor(
    message: string,
    readonly expired = false,
  ) {
    super(message);
  }
}

const decodeJson = (part: string, what: string): Record<string, unknown> => {
  try {
    const v = JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
    if (v && typeof v === 'object' && !Array.isArray(v)) return v as Record<string, unknown>;
  } catch {
    // fall through
  }
  throw new JwtError(`malformed ${what}`);
};

/**
 * Verifies one compact EdDSA (Ed25519) JWS synchronously with node:crypto. Narrow on
 * purpose: one algorithm, keys looked up by kid from our own table, no `jku`/`jwk`/`crit`
 * headers honoured, exp and nbf checked against the injected clock. jose (which signs our
 * tokens) verifies through WebCrypto's async job queue: a thread-pool round trip per
 * request that cost a third of /auth/me's throughput in bench/auth.
 */
export function verifyEdDsaJwt(
  token: string,
  keyFor: (kid: string) => KeyObject | undefined,
  opts: { issuer: string; typ: string; nowSeconds: number },
): VerifiedJwt {
  const parts = token.split('.');
  if (parts.length !== 3) throw new JwtError('not a compact JWS');
  const [h, p, s] = parts as [string, string, string];
  const header = decodeJson(h, 'header') as VerifiedJwt['header'] & Record<string, unknown>;
  if (header.alg !== 'EdDSA') throw new JwtError('unexpected algorithm');
  if (header.typ !== opts.typ) throw new JwtError('unexpected token type');
  if ('crit' in header) throw new JwtError('unsupported critical header');
  const key = typeof header.kid === 'string' ? keyFor(header.kid) : undefined;
  if (!key) throw new JwtError('unknown signing key');
  const signature = Buffer.from(s, 'base64url');
  if (signature.length !== 64 || !verify(null, Buffer.from(`${h}.${p}`), key, signature)) throw new JwtError('bad signature');
  const payload = decodeJson(p, 'payload');
  if (payload.iss !== opts.issuer) throw new JwtError('unexpected issuer');
  if (typeof payload.exp !== 'number' || payload.exp <= opts.nowSeconds) throw new JwtError('token expired', true);
  if (typeof payload.nbf === 'number' && payload.nbf > opts.nowSeconds) throw new JwtError('token not yet valid');
  return { header, payload };
}
