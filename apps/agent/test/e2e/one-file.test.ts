import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type ControlPlane, fleetOverRest, issueEnrollToken, startControlPlane } from '@svc/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AGENT_VERSION } from '../../src/version.ts';
import { agentEnv } from './loop.ts';

/**
 * The one-file agent (issue 31 item 1): `infra/bundle-app.mjs --self-contained` inlines every
 * dependency into `svc-agent-<version>.mjs` with its `.sha256` beside it. Copied alone into an
 * empty directory (no node_modules anywhere above it), run by plain node with no tsx: it names
 * its version, enrolls against a real control plane over gRPC/TLS with the CA pinned, and runs
 * Debian's v2ray until the node is online.
 */
const APP = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const OUT = `.one-test-${process.pid}`;
let file: string;
let alone: string;
let cp: ControlPlane;
let agent: ChildProcess | undefined;

beforeAll(async () => {
  execFileSync(process.execPath, [resolve(APP, '../../infra/bundle-app.mjs'), 'src/main.ts', OUT, '--self-contained'], {
    cwd: APP,
    stdio: 'pipe',
  });
  alone = mkdtempSync(join(tmpdir(), 'svc-agent-one-file-'));
  const built = join(APP, OUT, `svc-agent-${AGENT_VERSION}.mjs`);
  file = join(alone, basename(built));
  copyFileSync(built, file);
  copyFileSync(`${built}.sha256`, `${file}.sha256`);
  cp = await startControlPlane();
}, 120_000);

afterAll(async () => {
  if (agent && agent.exitCode === null) {
    const exited = new Promise((r) => agent?.once('exit', r));
    agent.kill('SIGTERM');
    await exited;
  }
  await cp?.stop();
  rmSync(join(APP, OUT), { recursive: true, force: true });
  if (alone) rmSync(alone, { recursive: true, force: true });
});

/** Plain node, in the file's own empty directory, with only PATH from the test's environment. */
const node = (args: string[], env: Record<string, string> = {}) =>
  execFileSync(process.execPath, [file, ...args], { cwd: alone, env: { PATH: process.env.PATH ?? '', ...env }, stdio: 'pipe' })
    .toString()
    .trim();

describe('the one-file agent', () => {
  it('is one version-stamped file with its SHA-256, importing nothing but Node itself', () => {
    const sum = createHash('sha256').update(readFileSync(file)).digest('hex');
    expect(readFileSync(`${file}.sha256`, 'utf8')).toBe(`${sum}  svc-agent-${AGENT_VERSION}.mjs\n`);
    expect(readFileSync(file, 'utf8').startsWith('#!/usr/bin/env node\n')).toBe(true);
    // What the file imports at run time, as the bundler recorded it: Node's own modules only.
    const meta = JSON.parse(readFileSync(join(APP, OUT, 'meta.json'), 'utf8')) as {
      outputs: Record<string, { imports: Array<{ path: string; external?: boolean }> }>;
    };
    const outputs = Object.values(meta.outputs);
    expect(outputs).toHaveLength(1);
    const imported = outputs.flatMap((o) => o.imports.map((i) => i.path));
    expect(imported.length).toBeGreaterThan(0);
    const builtin = new Set(builtinModules);
    expect(imported.filter((m) => !m.startsWith('node:') && !builtin.has(m))).toEqual([]);
    expect(node(['version'])).toBe(AGENT_VERSION);
  });

  it('enrolls against the control plane and runs the engine until the node is online', async () => {
    const made = await fleetOverRest.createNode(cp.api, { address: '127.0.0.1' });
    const issued = await issueEnrollToken(cp.api, made.id);
    const stateDir = join(alone, 'state');
    const enrolled = node(['enroll', '--server', issued.grpc_endpoint, '--token', issued.token, '--ca-sha256', issued.ca_cert_sha256], {
      SVC_AGENT_STATE_DIR: stateDir,
    });
    expect(JSON.parse(enrolled.split('\n')[0] as string)).toMatchObject({ msg: 'enrolled', node_id: made.id });

    agent = spawn(process.execPath, [file, 'run'], {
      cwd: alone,
      env: { PATH: process.env.PATH ?? '', ...agentEnv(stateDir) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const log: string[] = [];
    agent.stdout?.on('data', (b: Buffer) => log.push(b.toString()));
    agent.stderr?.on('data', (b: Buffer) => log.push(b.toString()));
    await expect
      .poll(async () => (await cp.api.get(`/api/v1/nodes/${made.id}`)).body.connectivity, { timeout: 30_000, interval: 200 })
      .toBe('online');
    const shown = (await cp.api.get(`/api/v1/nodes/${made.id}`)).body;
    expect(shown.agent_version, log.join('')).toBe(AGENT_VERSION);
  }, 60_000);
});
