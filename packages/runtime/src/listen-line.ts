import type { Config } from '@svc/config';
import { publicBaseUrl } from '@svc/domain';

/** `0.0.0.0:8080` -> `0.0.0.0`, `[::]:8080` -> `::`. */
const hostOf = (address: string): string => address.replace(/:\d+$/, '').replace(/^\[(.*)\]$/, '$1');

/** What a bound address means to a reader who is not sure what 0.0.0.0 is. */
export function addressScope(address: string): string | null {
  const host = hostOf(address);
  if (host === '0.0.0.0') return 'every IPv4 address of this machine';
  if (host === '::') return 'every address of this machine';
  if (host === '127.0.0.1' || host === '::1') return 'this machine only';
  return null;
}

/**
 * The URL a person opens to reach an HTTP listener bound to `address`: http.public_base_url
 * when set (the base of every link the system hands out), else the listener itself, with
 * `localhost` for an address that takes every interface (the address a browser on this machine
 * reaches, and the one links fall back to).
 */
export function openUrl(config: Pick<Config, 'http'>, address: string, port: number): string {
  if (config.http.public_base_url) return publicBaseUrl(config);
  const host = hostOf(address);
  const shown = host === '0.0.0.0' || host === '::' ? 'localhost' : host;
  return `http://${shown.includes(':') ? `[${shown}]` : shown}:${port}`;
}

/**
 * The line an HTTP deployable logs once it listens (docs/observability.md, "Logs"): the address
 * the socket is bound to, what that address means, and the URL a person opens, which differ as
 * soon as the listener takes every interface or sits behind a proxy. `msg` starts with
 * `<prefix> listening on`; the fields are `address` and `url`.
 */
export function listenLine(
  config: Pick<Config, 'http'>,
  bound: { address: string; port: number },
  prefix = '',
): { fields: { address: string; url: string }; msg: string } {
  const url = openUrl(config, bound.address, bound.port);
  const scope = addressScope(bound.address);
  const lead = prefix ? `${prefix} listening` : 'listening';
  return {
    fields: { address: bound.address, url },
    msg: `${lead} on ${bound.address}${scope ? ` (${scope})` : ''}; open ${url}`,
  };
}
