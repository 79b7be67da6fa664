// Baseline: bare EdDSA JWT verifies (jose, the server's own key and a real access token), one core.
import { createPublicKey } from 'node:crypto';
import { jwtVerify } from 'jose';

const { token, jwk, seconds } = JSON.parse(process.argv[2] as string) as { token: string; jwk: Record<string, unknown>; seconds: number };
const key = createPublicKey({ key: jwk as never, format: 'jwk' });
const until = performance.now() + seconds * 1000;
let n = 0;
// Warm-up, then count.
for (let i = 0; i < 2000; i++) await jwtVerify(token, key, { algorithms: ['EdDSA'] });
const start = performance.now();
while (performance.now() < until) {
  for (let i = 0; i < 500; i++) await jwtVerify(token, key, { algorithms: ['EdDSA'] });
  n += 500;
}
process.send?.({ perSecond: n / ((performance.now() - start) / 1000) });
