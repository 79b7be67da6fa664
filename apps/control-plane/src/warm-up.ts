import { setImmediate as turn } from 'node:timers/promises';
import { warmUpPushPath } from '@svc/desired-state';
import { ControlPlaneWireDefinition } from '@svc/proto';
import { createCachedGzip } from './cached-gzip.ts';

/** Rounds of the warm-up: V8 optimises the loops within the first; the next ones find the rest. */
const ROUNDS = 3;

/**
 * Runs a push's CPU path (compile, encode, the cached gzip's cuts, hashes and deflate) over a
 * made-up node of `users` members, `ROUNDS` times, yielding between steps, so that the first
 * big node this process pushes does not pay for V8's first tiers (packages/desired-state
 * warm-up.ts has the why). Its own gzip cache: nothing of it is kept. Resolves to the ms taken.
 */
export async function warmUpGateway(users: number, gzipLevel: number): Promise<number> {
  const t0 = performance.now();
  if (users <= 0) return 0;
  const gzip = createCachedGzip({ cacheBytes: 64 * 1024 * 1024 });
  for (let round = 0; round < ROUNDS; round++) {
    const config = await warmUpPushPath(users);
    await turn();
    const bytes = ControlPlaneWireDefinition.sync.responseSerialize({ desiredState: { revision: BigInt(round + 1), config } });
    await turn();
    if (gzipLevel > 0)
      await new Promise<void>((resolve, reject) => gzip.compress(bytes, 'gzip', gzipLevel, (err) => (err ? reject(err) : resolve())));
    await turn();
  }
  return performance.now() - t0;
}
