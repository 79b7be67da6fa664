// Baselines: bare EdDSA JWT verifies of a real access token with the server's own public key,
// in a loop on one core, no HTTP: (a) jose's jwtVerify, the library way; (b) the verifier
// the server runs (node:crypto, synchronous).
import { createPublicKey } from 'node:crypto';
import { verifyEdDsaJwt } from '@svc/domain';
import { jwtVerify } from 'jose';

const { token, jwk, seconds } = JSON.parse(process.argv[2] as string) as { token: string; jwk: Record<string, unknown>; seconds: number };
const key = createPublicKey({ key: jwk as never, format: 'jwk' });

async function rate(fn: () => unknown): Promise<number> {
  for (let i = 0; i < 2000; i++) await fn();
  const start = performance.now();
  const until = start + seconds * 1000;
  let n = 0;
  while (performance.now() < until) {
    for (let i = 0; i < 500; i++) await fn();
    n += 500;
  }
  return n / ((performance.now() - start) / 1000);
}

const jose = await rate(() => jwtVerify(token, key, { algorithms: ['EdDSA'] }));
const nowSeconds = Math.floor(Date.now() / 1000);
const ours = await rate(() => verifyEdDsaJwt(token, () => key, { issuer: 'svc', typ: 'at+jwt', nowSeconds }));
process.send?.({ jose, ours });
