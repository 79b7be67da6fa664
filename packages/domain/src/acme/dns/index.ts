// DNS-01: RFC 2136 dynamic update with TSIG.

export * from './dns-provider-port.ts';
export * from './rfc2136-client.ts';
export * from './rfc2136-message.ts';
