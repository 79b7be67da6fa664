import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AgentMessage } from '@svc/proto';
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { HELD_AFTER_MS, MAX_STARTS, readPending, rollBack, upgradeOnStart, writePending } from '../../src/upgrade/pending-upgrade.ts';
import { CURRENT, currentRelease, fetchRelease, releaseFile } from '../../src/upgrade/release-dir.ts';
import { Upgrader } from '../../src/upgrade/upgrader.ts';

/**
 * The agent's side of an upgrade (Command.upgrade_agent, docs/agent.md "Upgrades"): a release is
 * taken only when its SHA-256 matches and it runs and names the version asked for; the swap is
 * one rename of current.mjs; the new release proves itself by holding a stream, and one that
 * does not is put back with the reason, which the old release reports.
 */
let dir: string;
let server: Server;
let base: string;
const files = new Map<string, { body: Buffer; length?: string }>();

/** A file that runs under node and prints `version` for `version`. */
const releaseBody = (version: string) =>
  Buffer.from(`#!/usr/bin/env node\nif (process.argv[2] === 'version') console.log(${JSON.stringify(version)});\n`);
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

beforeAll(async () => {
  server = createServer((req, res) => {
    const f = files.get(req.url ?? '');
    if (!f) {
      res.writeHead(404);
      res.end();
      return;
    }
    res.writeHead(200, { 'content-length': f.length ?? String(f.body.length) });
    res.end(f.length ? undefined : f.body);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

const fresh = () => {
  dir = mkdtempSync(join(tmpdir(), 'svc-upgrade-'));
  return dir;
};
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('fetchRelease: a release is taken only verified', () => {
  it('takes a file whose SHA-256 matches and that names the version asked for, under its release name', async () => {
    const d = fresh();
    const body = releaseBody('1.2.3');
    files.set('/ok.mjs', { body });
    expect(await fetchRelease(d, { version: '1.2.3', url: `${base}/ok.mjs`, sha256: sha(body) })).toBe('svc-agent-1.2.3.mjs');
    expect(readFileSync(join(d, 'svc-agent-1.2.3.mjs'))).toEqual(body);
    expect(readdirSync(d)).toEqual(['svc-agent-1.2.3.mjs']);
  });

  it('refuses a file whose SHA-256 differs, and leaves nothing behind', async () => {
    const d = fresh();
    files.set('/tampered.mjs', { body: releaseBody('1.2.3') });
    await expect(fetchRelease(d, { version: '1.2.3', url: `${base}/tampered.mjs`, sha256: sha(releaseBody('1.2.4')) })).rejects.toThrow(
      /does not match its SHA-256/,
    );
    expect(readdirSync(d)).toEqual([]);
  });

  it('refuses a file that names another version, or does not run', async () => {
    const d = fresh();
    const other = releaseBody('9.9.9');
    files.set('/other.mjs', { body: other });
    await expect(fetchRelease(d, { version: '1.2.3', url: `${base}/other.mjs`, sha256: sha(other) })).rejects.toThrow(
      /names itself "9.9.9"/,
    );
    const broken = Buffer.from('throw new Error("broken at load")\n');
    files.set('/broken.mjs', { body: broken });
    await expect(fetchRelease(d, { version: '1.2.3', url: `${base}/broken.mjs`, sha256: sha(broken) })).rejects.toThrow(
      /does not run: .*broken at load/s,
    );
    expect(readdirSync(d)).toEqual([]);
  });

  it('refuses a declared size above the limit before reading it, a URL that is not http(s), a version that could leave the directory', async () => {
    const d = fresh();
    files.set('/huge.mjs', { body: Buffer.alloc(0), length: String(64 * 1024 * 1024) });
    await expect(fetchRelease(d, { version: '1.2.3', url: `${base}/huge.mjs`, sha256: 'a'.repeat(64) })).rejects.toThrow(/more than the/);
    await expect(fetchRelease(d, { version: '1.2.3', url: 'file:///etc/passwd', sha256: 'a'.repeat(64) })).rejects.toThrow(
      /not an http\(s\) URL/,
    );
    await expect(fetchRelease(d, { version: '../../x', url: `${base}/ok.mjs`, sha256: 'a'.repeat(64) })).rejects.toThrow(
      /not a release version/,
    );
    expect(() => releaseFile('1.2.3/../../x')).toThrow();
    expect(readdirSync(d)).toEqual([]);
  });
});

describe('upgradeOnStart: what a pending upgrade means for the agent that starts', () => {
  const pending = {
    command_id: 'cmd_1',
    from_version: '1.0.0',
    from_file: 'svc-agent-1.0.0.mjs',
    to_version: '1.1.0',
    to_file: 'svc-agent-1.1.0.mjs',
    starts: 0,
    requested_at: new Date(0).toISOString(),
  };

  it('none without a pending upgrade; the new release tries, counting its starts, and is rolled back after MAX_STARTS', async () => {
    const d = fresh();
    expect(await upgradeOnStart(d, '1.1.0')).toEqual({ kind: 'none' });
    await writePending(d, pending);
    for (let i = 1; i <= MAX_STARTS; i++)
      expect(await upgradeOnStart(d, '1.1.0')).toMatchObject({ kind: 'trying', pending: { starts: i } });
    const last = await upgradeOnStart(d, '1.1.0');
    expect(last).toMatchObject({ kind: 'roll-back' });
    expect(last.kind === 'roll-back' && last.reason).toMatch(/stopped 3 times before it held a stream.*1\.0\.0 was put back/);
  });

  it('rollBack points current.mjs at the old release; the old agent then reports the failure with the reason', async () => {
    const d = fresh();
    const releases = join(d, 'opt');
    execFileSync('mkdir', ['-p', releases]);
    symlinkSync('svc-agent-1.1.0.mjs', join(releases, CURRENT));
    await rollBack(d, releases, pending, 'the reason');
    expect(await currentRelease(releases)).toBe('svc-agent-1.0.0.mjs');
    expect(readlinkSync(join(releases, CURRENT))).toBe('svc-agent-1.0.0.mjs');
    expect(await upgradeOnStart(d, '1.0.0')).toMatchObject({ kind: 'failed', error: 'the reason' });
  });

  it('another version than the one asked for reports a failure', async () => {
    const d = fresh();
    await writePending(d, pending);
    expect(await upgradeOnStart(d, '1.0.5')).toMatchObject({
      kind: 'failed',
      error: expect.stringMatching(/1\.0\.5 runs instead of 1\.1\.0/),
    });
  });
});

describe('Upgrader: from the command to the result', () => {
  const deps = (d: string, releaseDir: string | null, version: string) => {
    const sent: AgentMessage[] = [];
    const restarts: number[] = [];
    return {
      sent,
      restarts,
      deps: {
        stateDir: d,
        releaseDir,
        version,
        log: pino({ level: 'silent' }),
        send: (m: AgentMessage) => {
          sent.push(m);
          return true;
        },
        connected: () => true,
        restart: (code: number) => {
          restarts.push(code);
        },
      },
    };
  };

  it('swaps a verified release in, records it pending and restarts; the new release holds a stream and reports success', async () => {
    const d = fresh();
    const releases = join(d, 'opt');
    execFileSync('mkdir', ['-p', releases]);
    chmodSync(releases, 0o755);
    writeFileSync(join(releases, 'svc-agent-1.0.0.mjs'), releaseBody('1.0.0'));
    symlinkSync('svc-agent-1.0.0.mjs', join(releases, CURRENT));
    const body = releaseBody('1.1.0');
    files.set('/next.mjs', { body });

    const old = deps(d, releases, '1.0.0');
    await new Upgrader(old.deps, { kind: 'none' }).handle('cmd_9', { version: '1.1.0', url: `${base}/next.mjs`, sha256: sha(body) });
    expect(old.restarts).toEqual([0]);
    expect(old.sent).toEqual([]);
    expect(readlinkSync(join(releases, CURRENT))).toBe('svc-agent-1.1.0.mjs');
    expect(await readPending(d)).toMatchObject({ command_id: 'cmd_9', from_file: 'svc-agent-1.0.0.mjs', to_version: '1.1.0', starts: 0 });

    const onStart = await upgradeOnStart(d, '1.1.0');
    const next = deps(d, releases, '1.1.0');
    const upgrader = new Upgrader(next.deps, onStart);
    upgrader.opened();
    await new Promise((r) => setTimeout(r, HELD_AFTER_MS + 300));
    upgrader.stop();
    expect(next.sent).toEqual([{ upgradeResult: { commandId: 'cmd_9', success: true, error: '', agentVersion: '1.1.0' } }]);
    expect(await readPending(d)).toBeNull();
    // Both releases stay (the old one for a later rollback by hand).
    expect(existsSync(join(releases, 'svc-agent-1.0.0.mjs'))).toBe(true);
  }, 15_000);

  it('refuses, saying why, without touching anything: a tampered file, an agent not installed by install.sh', async () => {
    const d = fresh();
    const releases = join(d, 'opt');
    execFileSync('mkdir', ['-p', releases]);
    symlinkSync('svc-agent-1.0.0.mjs', join(releases, CURRENT));
    files.set('/bad.mjs', { body: releaseBody('1.1.0') });
    const a = deps(d, releases, '1.0.0');
    await new Upgrader(a.deps, { kind: 'none' }).handle('cmd_a', { version: '1.1.0', url: `${base}/bad.mjs`, sha256: 'b'.repeat(64) });
    expect(a.restarts).toEqual([]);
    expect(a.sent[0]?.upgradeResult).toMatchObject({
      commandId: 'cmd_a',
      success: false,
      error: expect.stringMatching(/does not match its SHA-256/),
    });
    expect(readlinkSync(join(releases, CURRENT))).toBe('svc-agent-1.0.0.mjs');
    expect(await readPending(d)).toBeNull();

    const b = deps(d, null, '1.0.0');
    await new Upgrader(b.deps, { kind: 'none' }).handle('cmd_b', { version: '1.1.0', url: `${base}/bad.mjs`, sha256: 'b'.repeat(64) });
    expect(b.sent[0]?.upgradeResult).toMatchObject({ success: false, error: expect.stringMatching(/not installed by install\.sh/) });
  });
});
