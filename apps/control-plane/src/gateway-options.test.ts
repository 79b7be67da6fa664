import { loadConfig } from '@svc/config';
import { describe, expect, it } from 'vitest';
import { gatewayOptions } from './gateway-options.ts';

/** grpc.* keys the domain reads, not the gateway's listener: enroll tokens, agent versions, commands. */
const READ_BY_THE_DOMAIN = new Set(['public_endpoint', 'min_agent_version', 'enroll_token_ttl_seconds', 'command_timeout_seconds']);

describe('the gateway reads grpc.* once, in gatewayOptions', () => {
  it('every grpc.* key either shapes the gateway options or is one the domain reads', () => {
    const config = loadConfig({});
    const base = gatewayOptions(config.grpc);
    for (const [key, value] of Object.entries(config.grpc)) {
      if (READ_BY_THE_DOMAIN.has(key)) continue;
      const changed =
        typeof value === 'number'
          ? value + 1
          : typeof value === 'string'
            ? `${value}x`
            : Array.isArray(value)
              ? [...value, 'other.example']
              : undefined;
      expect(changed, `grpc.${key}: a number, string or list`).toBeDefined();
      expect(gatewayOptions({ ...config.grpc, [key]: changed }), `grpc.${key} changes nothing the gateway runs with`).not.toEqual(base);
    }
  });

  it('the default options are the configuration defaults in the gateway units', () => {
    const o = gatewayOptions(loadConfig({}).grpc);
    expect(o).toMatchObject({
      host: '0.0.0.0',
      port: 8443,
      tlsHosts: ['localhost', '127.0.0.1'],
      maxSendMessageBytes: 256 * 1024 * 1024,
      maxReceiveMessageBytes: 16 * 1024 * 1024,
      maxEnrollMessageBytes: 16 * 1024,
      idleTimeoutMs: 95_000,
      timing: { heartbeatMs: 5000, reconcileMs: 5000, staleAfterMs: 20_000 },
      gzipLevel: 1,
      gzipCacheBytes: 64 * 1024 * 1024,
      gzipDiskBytes: 256 * 1024 * 1024,
      admission: { perSecond: 1000, concurrency: 256, maxWaitMs: 20_000 },
      listenBacklog: 16_384,
    });
  });
});
