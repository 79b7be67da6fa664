import { describe, expect, it } from 'vitest';
import { listenLine } from './listen-line.ts';

// The listen line names the address the socket is bound to and, apart, the URL a person opens
// (issue 28.8: "listening on http://127.0.0.1:8080" while bound to 0.0.0.0).
const http = (public_base_url?: string) =>
  ({ http: { host: '0.0.0.0', port: 8080, ...(public_base_url ? { public_base_url } : {}) } }) as never;

describe('the listen line', () => {
  it('bound to every IPv4 address, no public base URL: says so, and a person opens localhost', () => {
    expect(listenLine(http(), { address: '0.0.0.0:8080', port: 8080 })).toEqual({
      fields: { address: '0.0.0.0:8080', url: 'http://localhost:8080' },
      msg: 'listening on 0.0.0.0:8080 (every IPv4 address of this machine); open http://localhost:8080',
    });
  });

  it('with a public base URL, the URL a person opens is that one, the bound address stays what it is', () => {
    expect(listenLine(http('https://cp.example.com/'), { address: '[::]:8080', port: 8080 }, 'admin-api')).toEqual({
      fields: { address: '[::]:8080', url: 'https://cp.example.com' },
      msg: 'admin-api listening on [::]:8080 (every address of this machine); open https://cp.example.com',
    });
  });

  it('bound to loopback on a port the system chose: that address and port, this machine only', () => {
    expect(listenLine(http(), { address: '127.0.0.1:41234', port: 41234 })).toEqual({
      fields: { address: '127.0.0.1:41234', url: 'http://127.0.0.1:41234' },
      msg: 'listening on 127.0.0.1:41234 (this machine only); open http://127.0.0.1:41234',
    });
  });

  it('bound to one address of the machine: no words added', () => {
    expect(listenLine(http(), { address: '10.0.0.5:8080', port: 8080 }).msg).toBe('listening on 10.0.0.5:8080; open http://10.0.0.5:8080');
  });
});
