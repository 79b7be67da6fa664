import type { Config } from '@svc/config';

/** Base of links handed to users (subscription URLs): http.public_base_url, else this listener. */
export function publicBaseUrl(config: Pick<Config, 'http'>): string {
  const base = config.http.public_base_url ?? `http://localhost:${config.http.port}`;
  return base.replace(/\/+$/, '');
}
