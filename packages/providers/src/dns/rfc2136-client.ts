import { Resolver } from 'node:dns/promises';
import { connect, isIP } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { UnavailableError } from '@svc/domain';
import { checkAnswer, DnsAnswerError, describeAnswer, signedUpdate, type TsigKey, type TxtChange } from './rfc2136-message.ts';

/** Where updates go: the primary server of the zone (BIND, PowerDNS, Knot), and the TSIG key it accepts. */
export interface Rfc2136Settings {
  /**
   * The primary server's IP address: the address the outbound client checked (the port pins a
   * configured name before calling here, so nothing below looks a name up a second time).
   */
  server: string;
  /** The server as the admin configured it (a name), for messages; `server` otherwise. */
  name?: string | undefined;
  port: number;
  key: TsigKey;
  /** The zone to update; found with an SOA walk at the server when absent. */
  zone?: string | undefined;
}

/**
 * Each exchange with the server is given up after this long, and a server that cannot be reached
 * is reported no sooner: refused, closed and silent ports read the same, in words and in time
 * (what tells them apart would map the ports of the hosts an admin may name).
 */
export const DNS_TIMEOUT_MS = 10_000;
/** What the resolver's answers (not connection failures) are called by node:dns. */
const ANSWERED = new Set(['ENODATA', 'ENOTFOUND', 'EREFUSED', 'ESERVFAIL', 'ENOTIMP', 'EFORMERR']);

const label = (s: Pick<Rfc2136Settings, 'server' | 'name' | 'port'>) => `${s.name ?? s.server}:${s.port}`;

/** The one failure of a server that did not answer, at DNS_TIMEOUT_MS after the exchange began. */
export async function serverUnreachable(s: Pick<Rfc2136Settings, 'server' | 'name' | 'port'>, startedAt: number): Promise<never> {
  const wait = startedAt + DNS_TIMEOUT_MS - Date.now();
  if (wait > 0) await sleep(wait);
  throw new UnavailableError(`the DNS server ${label(s)} is not reachable`, 30);
}

function assertAddress(s: Pick<Rfc2136Settings, 'server'>): void {
  if (isIP(s.server) === 0) throw new UnavailableError('the DNS server must be given as a checked address (outbound client)');
}

/** An answer larger than this is broken (an UPDATE answer is a few hundred bytes). */
const MAX_ANSWER_BYTES = 65_535;

/** One message over TCP (2-byte length prefix), the answer read whole and bounded, all within `timeoutMs`. */
function exchangeTcp(host: string, port: number, message: Buffer, timeoutMs: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host, port });
    let acc = Buffer.alloc(0);
    const timer = setTimeout(() => fail(new Error('no answer in time')), timeoutMs);
    const fail = (err: Error) => {
      clearTimeout(timer);
      socket.destroy();
      reject(err);
    };
    socket.on('connect', () => {
      const len = Buffer.alloc(2);
      len.writeUInt16BE(message.length);
      socket.write(Buffer.concat([len, message]));
    });
    socket.on('data', (d: Buffer) => {
      acc = Buffer.concat([acc, d]);
      if (acc.length > MAX_ANSWER_BYTES + 2) return fail(new Error('answer too large'));
      if (acc.length >= 2 && acc.length >= 2 + acc.readUInt16BE(0)) {
        clearTimeout(timer);
        socket.end();
        resolve(acc.subarray(2, 2 + acc.readUInt16BE(0)));
      }
    });
    socket.on('error', fail);
    socket.on('end', () => fail(new Error('the server closed the connection without an answer')));
  });
}

/** A resolver asking only the configured server (no cache, no fallback). */
function resolverAt(s: Pick<Rfc2136Settings, 'server' | 'port'>): Resolver {
  const r = new Resolver({ timeout: 2000, tries: 1 });
  const host = isIP(s.server) === 6 ? `[${s.server}]` : s.server;
  r.setServers([`${host}:${s.port}`]);
  return r;
}

/** The zone `fqdn` lives in, by asking the server for an SOA at each parent until one answers. */
export async function zoneAt(s: Rfc2136Settings, fqdn: string): Promise<string> {
  if (s.zone) return s.zone.replace(/\.$/, '');
  assertAddress(s);
  const resolver = resolverAt(s);
  const labels = fqdn.replace(/\.$/, '').split('.');
  for (let i = 0; i < labels.length - 1; i++) {
    const candidate = labels.slice(i).join('.');
    const startedAt = Date.now();
    try {
      await resolver.resolveSoa(candidate);
      return candidate;
    } catch (err) {
      // An answer without an SOA: not a zone apex at this server, try the parent. No answer: unreachable.
      if (!ANSWERED.has((err as { code?: string }).code ?? '')) return serverUnreachable(s, startedAt);
    }
  }
  throw new UnavailableError(`the DNS server ${label(s)} is authoritative for no zone containing ${fqdn}`);
}

/**
 * Sends one signed UPDATE with `changes` to the server and checks its signed answer. Any
 * refusal (REFUSED: the key may not change this name; NOTAUTH (BADSIG): a wrong secret; NOTZONE)
 * or a broken, unsigned or forged answer is an UnavailableError naming it, never the secret.
 */
export async function updateTxt(s: Rfc2136Settings, zone: string, changes: readonly TxtChange[], now: () => Date): Promise<void> {
  assertAddress(s);
  const req = signedUpdate(zone, changes, s.key, Math.floor(now().getTime() / 1000));
  const startedAt = Date.now();
  let answer: Buffer;
  try {
    answer = await exchangeTcp(s.server, s.port, req.message, DNS_TIMEOUT_MS);
  } catch {
    return serverUnreachable(s, startedAt);
  }
  let result: ReturnType<typeof checkAnswer>;
  try {
    result = checkAnswer(answer, req, s.key, Math.floor(now().getTime() / 1000));
  } catch (err) {
    if (err instanceof DnsAnswerError || err instanceof RangeError)
      throw new UnavailableError(`the DNS server ${label(s)} gave an answer we cannot accept: ${err.message}`);
    throw err;
  }
  if (result.rcode !== 0 || result.tsigError !== 0)
    throw new UnavailableError(`the DNS server ${label(s)} refused the update of zone ${zone}: ${describeAnswer(result)}`);
}

/** Whether `value` is among the TXT values of `fqdn` at the server itself (the authoritative answer). */
export async function txtVisibleAt(s: Pick<Rfc2136Settings, 'server' | 'port'>, fqdn: string, value: string): Promise<boolean> {
  if (isIP(s.server) === 0) return false;
  try {
    const records = await resolverAt(s).resolveTxt(fqdn);
    return records.some((chunks) => chunks.join('') === value);
  } catch {
    return false;
  }
}
