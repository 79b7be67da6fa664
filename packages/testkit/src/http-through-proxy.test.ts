import { afterEach, describe, expect, it } from 'vitest';
import { type EngineProcess, freePort, startV2ray } from './engine-process.ts';
import {
  type EchoServer,
  httpGetThroughProxy,
  httpRequestThroughProxy,
  startEchoServer,
  streamThroughProxy,
} from './http-through-proxy.ts';
import { v2rayAvailable } from './v2ray.ts';

const v2ray = v2rayAvailable();
if (!v2ray.available) console.warn(`http-through-proxy: skipped, the proxy in these tests is v2ray: ${v2ray.reason}`);

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()?.();
});

/** v2ray as a plain HTTP proxy (http inbound, freedom outbound) and the echo server behind it. */
async function proxyAndEcho(): Promise<{ proxy: EngineProcess; proxyPort: number; echo: EchoServer }> {
  const echo = await startEchoServer();
  cleanups.push(() => echo.close());
  const proxyPort = await freePort();
  const proxy = await startV2ray(
    {
      log: { loglevel: 'warning' },
      inbounds: [{ listen: '127.0.0.1', port: proxyPort, protocol: 'http', settings: {} }],
      outbounds: [{ protocol: 'freedom', settings: {} }],
    },
    { waitForPorts: [proxyPort] },
  );
  cleanups.push(() => proxy.kill());
  return { proxy, proxyPort, echo };
}

describe.skipIf(!v2ray.available)('through a real HTTP proxy (v2ray)', () => {
  it('GET /bytes/<n> moves exactly n body bytes; GET / answers ok', async () => {
    const { proxyPort, echo } = await proxyAndEcho();
    const big = await httpGetThroughProxy(proxyPort, `${echo.url}/bytes/300000`);
    expect(big.status).toBe(200);
    expect(big.bytes).toBe(300_000);
    expect(big.body).toBe('x'.repeat(300_000));
    expect(await httpGetThroughProxy(proxyPort, `${echo.url}/bytes/0`)).toEqual({ status: 200, body: '', bytes: 0 });
    expect(await httpGetThroughProxy(proxyPort, `${echo.url}/`)).toMatchObject({ status: 200, body: 'ok' });
    expect((await httpGetThroughProxy(proxyPort, `${echo.url}/nothing-here`)).status).toBe(404);
  });

  it('POST /sink counts the uploaded bytes, in the answer and on the server', async () => {
    const { proxyPort, echo } = await proxyAndEcho();
    const res = await httpRequestThroughProxy(proxyPort, `${echo.url}/sink`, { body: Buffer.alloc(123_456, 1) });
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body)).toEqual({ received: 123_456 });
    expect(echo.receivedBytes()).toBe(123_456);
  });

  it('an open /stream is cut when the proxy dies (kill -9): the client sees it cut, the server sees the client leave', async () => {
    const { proxy, proxyPort, echo } = await proxyAndEcho();
    const stream = streamThroughProxy(proxyPort, `${echo.url}/stream`);
    expect((await stream.opened).status).toBe(200);
    expect(echo.openStreams()).toBe(1);

    await proxy.kill();
    const ended = await stream.ended;
    expect(ended.cut).toBe(true);
    expect(ended.bytes).toBe(stream.received());
    await echo.streamsClosed(1);
    expect(echo.openStreams()).toBe(0);
  });

  it('a client that leaves a /stream ends it on the server (the echo server takes absolute-form requests itself)', async () => {
    // Not through v2ray: its HTTP inbound keeps the upstream connection after the client left.
    const echo = await startEchoServer();
    cleanups.push(() => echo.close());
    const stream = streamThroughProxy(echo.port, `${echo.url}/stream`);
    await stream.opened;
    stream.close();
    expect((await stream.ended).cut).toBe(true);
    await echo.streamsClosed(1);
    expect(echo.openStreams()).toBe(0);
  });

  it('a request to a proxy port where nothing listens rejects', async () => {
    const echo = await startEchoServer();
    cleanups.push(() => echo.close());
    await expect(httpGetThroughProxy(await freePort(), `${echo.url}/`)).rejects.toThrow(/ECONNREFUSED/);
  });
});
