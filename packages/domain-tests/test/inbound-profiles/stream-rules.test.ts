import { CreateInboundProfileInput } from '@svc/domain';
import type { Fixtures } from '@svc/testkit';
import { describe, expect, it } from 'vitest';
import { fileTestbed, inputErrors } from '../support.ts';

const t = fileTestbed();

type StreamInput = NonNullable<Parameters<Fixtures['profile']>[0]>['stream'];

const REALITY = { dest: 'www.example.com:443', server_names: ['www.example.com'] };
/** The reasons the create schema gives for a vmess profile with this stream. */
const streamErrors = (stream: Record<string, unknown>, protocol = 'vmess') =>
  inputErrors(CreateInboundProfileInput, { name: 'p', protocol, stream });

describe('the stream of an inbound profile', () => {
  it('only the settings object of the chosen network and security may be present, each named', () => {
    expect(
      streamErrors({ network: 'tcp', security: 'none', ws: { path: '/x' }, grpc: { service_name: 'a' }, tls: { certificate_id: 'crt_x' } }),
    ).toMatchObject({
      'stream.ws': 'only allowed when stream.network is ws',
      'stream.grpc': 'only allowed when stream.network is grpc',
      'stream.tls': 'only allowed when stream.security is tls',
    });
    expect(streamErrors({ network: 'tcp', security: 'tls', tls: { certificate_id: 'crt_x' }, reality: REALITY })['stream.reality']).toBe(
      'only allowed when stream.security is reality',
    );
  });

  it('security tls needs tls, reality needs reality, network grpc needs grpc (its service name)', () => {
    expect(streamErrors({ network: 'tcp', security: 'tls' })['stream.tls']).toMatch(/required/);
    expect(streamErrors({ network: 'tcp', security: 'reality' })['stream.reality']).toMatch(/required/);
    expect(streamErrors({ network: 'grpc', security: 'none' })['stream.grpc']).toMatch(/required/);
  });

  it('REALITY works only with tcp, grpc or xhttp', async () => {
    for (const network of ['ws', 'httpupgrade'])
      expect(streamErrors({ network, security: 'reality', reality: REALITY }, 'vless')['stream.security']).toMatch(/tcp, grpc, xhttp/);
    await t.f.profile({ stream: { network: 'grpc', security: 'reality', grpc: { service_name: 'tun' }, reality: REALITY } });
    const xhttp = await t.f.profile({ stream: { network: 'xhttp', security: 'reality', reality: REALITY } });
    expect(xhttp.stream.xhttp).toEqual({ path: '/', host: '', mode: 'auto' });
  });

  it('fills the defaults of the chosen transport and keeps what is given', async () => {
    const profile = (stream: StreamInput) => t.f.profile({ protocol: 'vmess', stream });
    expect((await profile({ network: 'ws', security: 'none' })).stream).toEqual({
      network: 'ws',
      security: 'none',
      ws: { path: '/', headers: {} },
    });
    expect((await profile({ network: 'tcp', security: 'none' })).stream.tcp).toEqual({ accept_proxy_protocol: false });
    expect((await profile({ network: 'ws', security: 'none', ws: { path: '/v', headers: { 'X-A': 'b' } } })).stream.ws).toEqual({
      path: '/v',
      headers: { 'X-A': 'b' },
    });
    expect(
      (await profile({ network: 'httpupgrade', security: 'none', httpupgrade: { path: '/u', host: 'cdn.example.com' } })).stream
        .httpupgrade,
    ).toEqual({ path: '/u', host: 'cdn.example.com' });
    expect((await profile({ network: 'grpc', security: 'none', grpc: { service_name: 'svc' } })).stream.grpc).toEqual({
      service_name: 'svc',
      multi_mode: false,
    });
  });

  it('paths start with /, hosts are host names or IPs, header names are tokens, modes and networks come from their lists', () => {
    expect(streamErrors({ network: 'ws', security: 'none', ws: { path: 'nope' } })['stream.ws.path']).toBe('must start with /');
    expect(streamErrors({ network: 'xhttp', security: 'none', xhttp: { host: 'a b' } })['stream.xhttp.host']).toBe(
      'must be a host name or an IP address',
    );
    expect(streamErrors({ network: 'ws', security: 'none', ws: { headers: { 'Bad Name': 'x' } } })['stream.ws.headers.Bad Name']).toBe(
      'not a valid header name',
    );
    expect(streamErrors({ network: 'xhttp', security: 'none', xhttp: { mode: 'sideways' } })).toHaveProperty(['stream.xhttp.mode']);
    expect(streamErrors({ network: 'tcp', security: 'none', tcp: { header: 'http' } })).not.toEqual({});
    expect(streamErrors({ network: 'kcp', security: 'none' })).toHaveProperty(['stream.network']);
  });
});
