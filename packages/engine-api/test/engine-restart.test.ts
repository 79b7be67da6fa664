import { NodeConfig, Protocol } from '@svc/proto';
import { type EngineProcess, freePort, startV2ray } from '@svc/testkit/engine-process';
import { v2rayAvailable } from '@svc/testkit/v2ray';
import { renderXrayConfig } from '@svc/xray-config';
import { afterAll, describe, expect, it } from 'vitest';
import { createEngineApi, EngineApiError } from '../src/index.ts';

/**
 * The agent keeps one EngineApi while it restarts the engine: a killed engine answers
 * 'unavailable', and the same client reaches the engine started again on the same port.
 */

const v2ray = v2rayAvailable();
if (!v2ray.available) console.warn(`engine restart test skipped: ${v2ray.reason}`);

let engine: EngineProcess | undefined;
afterAll(async () => {
  await engine?.stop();
});

describe.skipIf(!v2ray.available)('an engine killed and started again', () => {
  it('is unavailable while killed (kill -9), and the same EngineApi reaches it once it is back', async () => {
    const apiPort = await freePort();
    const config = renderXrayConfig(NodeConfig.fromPartial({ xray: { outbounds: [{ tag: 'direct', protocol: Protocol.FREEDOM }] } }), {
      apiPort,
      certificatePaths: () => {
        throw new Error('no certificates');
      },
    });
    engine = await startV2ray(config, { name: 'restarted', waitForPorts: [apiPort] });
    const api = createEngineApi({ address: `127.0.0.1:${apiPort}`, flavour: 'v2ray' });
    try {
      expect((await api.sysStats()).numGoroutine).toBeGreaterThan(0);
      await engine.kill();
      expect(engine.child.signalCode).toBe('SIGKILL');
      const down = await api.sysStats().catch((e: unknown) => e);
      expect(down).toBeInstanceOf(EngineApiError);
      expect(down).toMatchObject({ kind: 'unavailable' });

      engine = await startV2ray(config, { name: 'restarted', waitForPorts: [apiPort] });
      // The channel reconnects on its own backoff; retried until it does (bounded, not timed).
      let stats: Awaited<ReturnType<typeof api.sysStats>> | undefined;
      for (let attempt = 0; attempt < 100 && !stats; attempt++) {
        stats = await api.sysStats().catch((e: unknown) => {
          if (!(e instanceof EngineApiError) || e.kind !== 'unavailable') throw e;
          return new Promise<undefined>((r) => setTimeout(() => r(undefined), 100));
        });
      }
      expect(stats?.numGoroutine).toBeGreaterThan(0);
    } finally {
      api.close();
    }
  });
});
