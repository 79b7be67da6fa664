import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { Resolver } from 'node:dns/promises';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './engine-process.ts';
import { peerMissing } from './peers.ts';
import { stopChild } from './processes.ts';

/**
 * Debian's BIND (`named`) as an authoritative server of one test zone on 127.0.0.1, updated
 * over RFC 2136 with a TSIG key that may change TXT records only (update-policy zonesub TXT),
 * in a fresh temporary directory (its journal lives there). Tests skip when `named` is missing.
 */
export interface BindServer {
  port: number;
  zone: string;
  keyName: string;
  /** base64, hmac-sha256. */
  secret: string;
  stop(): Promise<void>;
}

export const NAMED = '/usr/sbin/named';

/** Whether BIND's named can run; with CI=true, missing is an error (peers.ts). */
export function bindAvailable(): boolean {
  if (spawnSync(NAMED, ['-v'], { stdio: 'ignore' }).status === 0) return true;
  peerMissing('BIND', `${NAMED} not runnable; apt-get install bind9 bind9-utils`);
  return false;
}

export async function startBind(zone = 'example.test'): Promise<BindServer> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-bind-'));
  const port = await freePort();
  const keyName = 'acme-key';
  const secret = randomBytes(32).toString('base64');
  writeFileSync(join(dir, 'tsig.key'), `key "${keyName}" { algorithm hmac-sha256; secret "${secret}"; };\n`);
  writeFileSync(
    join(dir, 'named.conf'),
    `include "${dir}/tsig.key";
options {
  directory "${dir}";
  pid-file "${dir}/named.pid";
  session-keyfile "${dir}/session.key";
  listen-on port ${port} { 127.0.0.1; };
  listen-on-v6 { none; };
  recursion no;
  dnssec-validation no;
  allow-query { any; };
};
controls { };
zone "${zone}" {
  type primary;
  file "${dir}/${zone}.zone";
  update-policy { grant ${keyName} zonesub TXT; };
};
`,
  );
  writeFileSync(
    join(dir, `${zone}.zone`),
    `$TTL 60
@   IN SOA ns1.${zone}. hostmaster.${zone}. ( 1 60 60 86400 60 )
    IN NS  ns1.${zone}.
ns1 IN A   127.0.0.1
@   IN A   127.0.0.1
`,
  );
  const child: ChildProcess = spawn(NAMED, ['-g', '-n', '1', '-c', join(dir, 'named.conf')], { stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  child.stderr?.setEncoding('utf8').on('data', (s: string) => {
    log = (log + s).slice(-20_000);
  });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const stop = async () => {
    await stopChild(child, exited);
    rmSync(dir, { recursive: true, force: true });
  };
  const resolver = new Resolver({ timeout: 500, tries: 1 });
  resolver.setServers([`127.0.0.1:${port}`]);
  const deadline = Date.now() + 20_000;
  for (;;) {
    try {
      await resolver.resolveSoa(zone);
      break;
    } catch {
      if (child.exitCode !== null || Date.now() > deadline) {
        await stop();
        throw new Error(`named did not start:\n${log}`);
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  return { port, zone, keyName, secret, stop };
}
