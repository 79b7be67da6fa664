import { isIP } from 'node:net';

/**
 * Who is connected from where, learned from the engine's access log (its stdout): Xray writes
 * `2025/01/02 15:04:05.000000 from tcp:203.0.113.9:51234 accepted tcp:example.com:443 [in -> out] email: u@svc`,
 * v2ray 4.x the same without `from`. The source address of each accepted connection is kept per
 * user email (bounded), so that the connections of a removed user can be found and ended.
 * Parsed by splitting on spaces: no regular expression runs over what clients can influence.
 */
export interface AccessEntry {
  email: string;
  /** Client address as the engine saw it: host (IPv6 without brackets) and port. */
  host: string;
  port: number;
}

const EMAIL_MARK = ' email: ';

/** The connection an access-log line reports, or null for any other line. */
export function parseAccessLine(line: string): AccessEntry | null {
  const at = line.lastIndexOf(EMAIL_MARK);
  if (at < 0) return null;
  const email = line.slice(at + EMAIL_MARK.length).trim();
  if (email === '' || email.includes(' ')) return null;
  const words = line.slice(0, at).split(' ');
  const accepted = words.indexOf('accepted');
  if (accepted < 1) return null;
  const source = parseEndpoint(words[accepted - 1] as string);
  return source ? { email, ...source } : null;
}

/** `tcp:1.2.3.4:5`, `1.2.3.4:5`, `udp:[2001:db8::1]:5` -> host and port. */
export function parseEndpoint(word: string): { host: string; port: number } | null {
  let w = word;
  if (w.startsWith('tcp:') || w.startsWith('udp:')) w = w.slice(4);
  const colon = w.lastIndexOf(':');
  if (colon <= 0) return null;
  const portText = w.slice(colon + 1);
  if (!/^\d{1,5}$/.test(portText)) return null;
  const port = Number(portText);
  let host = w.slice(0, colon);
  if (host.startsWith('[') && host.endsWith(']')) host = host.slice(1, -1);
  if (port < 1 || port > 65535 || host === '') return null;
  if (isIP(host) === 0) return null;
  return { host, port };
}

/** The last sources of each user's connections. */
export class ConnectionBook {
  private readonly byEmail = new Map<string, Map<string, AccessEntry>>();

  constructor(
    readonly perUser = 256,
    readonly maxUsers = 200_000,
  ) {}

  /** Feeds one engine log line; answers the connection it reports (null for any other line). */
  see(line: string): AccessEntry | null {
    const e = parseAccessLine(line);
    if (!e) return null;
    let set = this.byEmail.get(e.email);
    if (!set) {
      if (this.byEmail.size >= this.maxUsers) return e;
      set = new Map();
      this.byEmail.set(e.email, set);
    }
    const key = `${e.host}|${e.port}`;
    set.delete(key);
    set.set(key, e);
    if (set.size > this.perUser) set.delete(set.keys().next().value as string);
    return e;
  }

  /** The sources recorded for `email`, forgotten as they are handed out. */
  take(email: string): AccessEntry[] {
    const set = this.byEmail.get(email);
    this.byEmail.delete(email);
    return set ? [...set.values()] : [];
  }
}
