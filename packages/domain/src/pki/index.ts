export * from './ca-store.ts';
export * from './internal-ca.ts';
export * from './peer-certificate.ts';
export * from './tls-session-tickets.ts';
export * from './verified-certificates.ts';
