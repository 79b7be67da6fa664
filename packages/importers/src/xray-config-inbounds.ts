import type { ImportedInbound, ImportNotCarried } from '@svc/domain';
import { ImportSourceError } from './import-source-error.ts';

const PROTOCOLS = new Set(['vless', 'vmess', 'trojan', 'shadowsocks']);
/** An xray_config.json larger than this is not a panel's configuration. */
export const XRAY_CONFIG_MAX_BYTES = 4 * 1024 * 1024;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The proxy inbounds of an Xray JSON configuration (Marzban's xray_config.json): VLESS, VMess,
 * Trojan and Shadowsocks ones with a tag and a port; the rest (the API's dokodemo-door, others)
 * is not a user's inbound and is left out, said in `notCarried` when it looks like one.
 */
export function xrayConfigInbounds(text: string, what: string): { inbounds: ImportedInbound[]; notCarried: ImportNotCarried[] } {
  if (Buffer.byteLength(text) > XRAY_CONFIG_MAX_BYTES) throw new ImportSourceError(`${what} is larger than ${XRAY_CONFIG_MAX_BYTES} bytes`);
  let config: unknown;
  try {
    config = JSON.parse(text);
  } catch (err) {
    throw new ImportSourceError(`${what} is not JSON: ${(err as Error).message}`);
  }
  if (!isObject(config) || !Array.isArray(config.inbounds))
    throw new ImportSourceError(`${what} has no "inbounds" list: not an Xray configuration`);
  const inbounds: ImportedInbound[] = [];
  const notCarried: ImportNotCarried[] = [];
  const seen = new Set<string>();
  for (const raw of config.inbounds) {
    if (!isObject(raw)) continue;
    const tag = typeof raw.tag === 'string' ? raw.tag : '';
    const protocol = typeof raw.protocol === 'string' ? raw.protocol.toLowerCase() : '';
    if (!PROTOCOLS.has(protocol)) continue;
    const port = typeof raw.port === 'number' ? raw.port : Number(raw.port);
    if (!tag || seen.has(tag)) {
      notCarried.push({ what: `inbound ${tag || '(no tag)'}`, why: tag ? 'a second inbound with this tag' : 'no tag' });
      continue;
    }
    if (!Number.isInteger(port) || port < 1 || port > 65_535) {
      notCarried.push({ what: `inbound ${tag}`, why: `its port is not one port (${JSON.stringify(raw.port)})` });
      continue;
    }
    seen.add(tag);
    const settings = isObject(raw.settings) ? raw.settings : {};
    inbounds.push({
      tag,
      protocol: protocol as ImportedInbound['protocol'],
      port,
      listen: typeof raw.listen === 'string' && raw.listen !== '' ? raw.listen : null,
      streamSettings: isObject(raw.streamSettings) ? raw.streamSettings : null,
      shadowsocksMethod: protocol === 'shadowsocks' && typeof settings.method === 'string' ? settings.method : null,
      shadowsocksServerKey:
        protocol === 'shadowsocks' && typeof settings.password === 'string' && settings.password !== '' ? settings.password : null,
      sniffing: isObject(raw.sniffing) ? raw.sniffing : null,
    });
  }
  return { inbounds, notCarried };
}
