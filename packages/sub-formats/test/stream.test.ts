import { describe, expect, it } from 'vitest';
import type { ServerEntry } from '../src/model.ts';
import { uniqueNames } from '../src/placeholder.ts';
import { httpTransport, splitEarlyData, unusableReason, visionFlow, xhttpMode } from '../src/stream.ts';
import { shadowsocksServers, vlessServers } from './fixtures.ts';

const vless = (name: string) => vlessServers().find((s) => s.name === name) as ServerEntry;

describe('stream helpers', () => {
  it('splitEarlyData takes ?ed=N off a WebSocket path and keeps other query parameters', () => {
    expect(splitEarlyData('/ws?ed=2560')).toEqual({ path: '/ws', maxEarlyData: 2560 });
    expect(splitEarlyData('/ws?x=1&ed=2048')).toEqual({ path: '/ws?x=1', maxEarlyData: 2048 });
    expect(splitEarlyData('/a b?c')).toEqual({ path: '/a b?c', maxEarlyData: 0 });
    expect(splitEarlyData('/ws?ed=abc')).toEqual({ path: '/ws?ed=abc', maxEarlyData: 0 });
    expect(splitEarlyData('/')).toEqual({ path: '/', maxEarlyData: 0 });
  });

  it('visionFlow: only VLESS over tcp with tls or REALITY', () => {
    expect(visionFlow(vless('vless tcp tls vision'))).toBe('xtls-rprx-vision');
    expect(visionFlow({ ...vless('vless tcp none'), flow: 'xtls-rprx-vision' })).toBe('');
    expect(visionFlow({ ...vless('vless grpc tls'), flow: 'xtls-rprx-vision' })).toBe('');
    expect(visionFlow(vless('vless tcp tls'))).toBe('');
  });

  it('xhttpMode hyphenates the model mode; a missing transport object reads as defaults', () => {
    expect(xhttpMode(vless('vless xhttp none'))).toBe('packet-up');
    const bare: ServerEntry = { ...vless('vless ws none'), stream: { network: 'ws', security: 'none' } };
    expect(httpTransport(bare)).toEqual({ path: '/', host: '' });
    expect(xhttpMode({ ...bare, stream: { network: 'xhttp', security: 'none' } })).toBe('auto');
  });

  it('unusableReason rejects what no client can use', () => {
    const ss = shadowsocksServers()[0] as ServerEntry;
    expect(unusableReason(ss)).toBeUndefined();
    expect(unusableReason({ ...ss, password: '' })).toMatch(/method and password/);
    expect(unusableReason({ ...vless('vless tcp none'), uuid: undefined })).toMatch(/uuid/);
    const reality = vless('vless tcp reality');
    expect(unusableReason(reality)).toBeUndefined();
    expect(unusableReason({ ...reality, stream: { ...reality.stream, network: 'ws' } })).toMatch(/REALITY works only/);
    expect(unusableReason({ ...reality, stream: { network: 'tcp', security: 'reality' } })).toMatch(/public key/);
  });

  it('uniqueNames suffixes names taken by reserved tags (case-insensitively) or by earlier servers (exactly)', () => {
    const s = (name: string) => ({ ...(shadowsocksServers()[0] as ServerEntry), name });
    expect(uniqueNames([s('proxy'), s('a'), s('a (2)'), s('Proxy')], ['Proxy'])).toEqual(['proxy (2)', 'a', 'a (2)', 'Proxy (2)']);
    expect(uniqueNames([s('x (2)'), s('x'), s('direct')], ['x', 'DIRECT'])).toEqual(['x (2)', 'x (3)', 'direct (2)']);
  });
});
