import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { caSignedCertificate } from './certificates.ts';
import { freePort } from './engine-process.ts';
import { peerMissing } from './peers.ts';
import { stopChild } from './processes.ts';

/**
 * Debian's `pebble` (Let's Encrypt's ACME test CA) on 127.0.0.1, its HTTPS listener under a CA
 * of our own (the package ships no test certificates), validating DNS-01 through the DNS
 * server given (a BindServer's port), deterministic (no nonce rejections, no authorization
 * reuse, no sleeps). `eab` requires External Account Binding with these kid -> base64url keys.
 */
export interface PebbleServer {
  directoryUrl: string;
  /** The CA of pebble's HTTPS listener: what a client must trust to reach the directory. */
  caPem: string;
  /** Management API (GET /roots/0: the root the issued chains end at). */
  managementUrl: string;
  stop(): Promise<void>;
}

export const PEBBLE = '/usr/bin/pebble';

/** Whether pebble (and the openssl it is driven with) can run; with CI=true, missing is an error (peers.ts). */
export function pebbleAvailable(): boolean {
  if (spawnSync(PEBBLE, ['-h'], { stdio: 'ignore' }).error !== undefined) {
    peerMissing('pebble', `${PEBBLE} not runnable; apt-get install pebble`);
    return false;
  }
  if (spawnSync('openssl', ['version'], { stdio: 'ignore' }).status !== 0) {
    peerMissing('openssl', 'openssl not runnable; apt-get install openssl');
    return false;
  }
  return true;
}

export async function startPebble(opts: {
  dnsPort: number;
  eab?: Record<string, string>;
  /** Seconds an issued certificate is valid (pebble's certificateValidityPeriod). */
  validitySeconds?: number;
}): Promise<PebbleServer> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-pebble-'));
  // pebble's HTTPS listener, under a CA of our own (the package ships no test certificates).
  const tls = caSignedCertificate('localhost', 2, ['127.0.0.1']);
  writeFileSync(join(dir, 'cert.pem'), tls.cert_pem);
  writeFileSync(join(dir, 'key.pem'), tls.key_pem);
  const [port, mgmt] = [await freePort(), await freePort()];
  writeFileSync(
    join(dir, 'pebble.json'),
    JSON.stringify({
      pebble: {
        listenAddress: `127.0.0.1:${port}`,
        managementListenAddress: `127.0.0.1:${mgmt}`,
        certificate: join(dir, 'cert.pem'),
        privateKey: join(dir, 'key.pem'),
        httpPort: 5002,
        tlsPort: 5001,
        ocspResponderURL: '',
        externalAccountBindingRequired: Boolean(opts.eab),
        ...(opts.eab ? { externalAccountMACKeys: opts.eab } : {}),
        ...(opts.validitySeconds ? { certificateValidityPeriod: opts.validitySeconds } : {}),
      },
    }),
  );
  const child: ChildProcess = spawn(PEBBLE, ['-config', join(dir, 'pebble.json'), '-dnsserver', `127.0.0.1:${opts.dnsPort}`], {
    env: { ...process.env, PEBBLE_VA_NOSLEEP: '1', PEBBLE_WFE_NONCEREJECT: '0', PEBBLE_AUTHZREUSE: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  const collect = (s: string) => {
    log = (log + s).slice(-20_000);
  };
  child.stdout?.setEncoding('utf8').on('data', collect);
  child.stderr?.setEncoding('utf8').on('data', collect);
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const stop = async () => {
    await stopChild(child, exited);
    rmSync(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + 20_000;
  while (!log.includes('ACME directory available')) {
    if (child.exitCode !== null || Date.now() > deadline) {
      await stop();
      throw new Error(`pebble did not start:\n${log}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    directoryUrl: `https://localhost:${port}/dir`,
    caPem: tls.ca,
    managementUrl: `https://localhost:${mgmt}`,
    stop,
  };
}
