import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, statSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  type ControlPlane,
  createFleetForProtocols,
  decodeSubscriptionBody,
  type Fleet,
  fetchSubscription,
  httpGetThroughProxy,
  parseShareLink,
  startControlPlane,
  streamThroughProxy,
  subscriptionUsage,
} from '@svc/testkit';
import { freePort } from '@svc/testkit/engine-process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AGENT_VERSION } from '../../src/version.ts';
import { type CountingServer, clientFor, eventually, skipReason as noV2ray, sleep, startCountingServer } from './loop.ts';

/**
 * Issue 31: a node in one command. The install script is run exactly as the enroll-token answer
 * prints it (`curl -fsSL <base>/agent/install.sh | sh -s -- --token … --ca-sha256 …`, with
 * `--engine-bin /usr/bin/v2ray --engine-api v2ray --prefix <scratch root>` appended as an operator
 * appends options), against a running control plane. Systemd cannot run here (no systemd as PID
 * 1), so the scratch root is a prefix and systemctl is a stand-in (test/install/
 * systemctl-stand-in.mjs) that runs the unit install.sh wrote as systemd would: its User= via
 * setpriv with the unit's capabilities, Restart=always, KillMode=process. The control plane's
 * public base URL is a proxy in front of it that can tamper with the agent file on the way.
 */
const here = dirname(fileURLToPath(import.meta.url));
const APP = resolve(here, '../..');
const STAND_IN = resolve(here, '../install/systemctl-stand-in.mjs');
const V2RAY = '/usr/bin/v2ray';
const skipReason =
  noV2ray ??
  (process.getuid?.() !== 0
    ? 'the install script runs as root (it creates a user and a service)'
    : !existsSync(V2RAY)
      ? `${V2RAY} is not installed`
      : null);
if (skipReason) console.warn(`install script tests skipped: ${skipReason}`);

/** The next release: this version with its patch raised, as a pre-release (a test build). */
const NEXT = AGENT_VERSION.replace(/^(\d+)\.(\d+)\.(\d+).*$/, (_, a, b, c) => `${a}.${b}.${Number(c) + 1}-test.1`);

let work: string;
let root: string;
let dist: string;
let cp: ControlPlane;
let fleet: Fleet;
let dest: CountingServer;
let proxy: TamperingProxy;
const standInState = () => join(work, 'systemctl');

beforeAll(async () => {
  if (skipReason) return;
  work = mkdtempSync(join(tmpdir(), 'svc-install-'));
  // The dedicated user reaches the prefix (mkdtemp makes 0700).
  chmodSync(work, 0o755);
  root = join(work, 'root');
  dist = join(work, 'dist');
  build(AGENT_VERSION, dist);
  build(NEXT, join(work, 'next'));
  proxy = await startTamperingProxy();
  cp = await startControlPlane({ env: { SVC_AGENT_DIST_DIR: dist, SVC_PUBLIC_BASE_URL: proxy.url } });
  proxy.target(cp.httpPort);
  fleet = await createFleetForProtocols(cp.api, { node: { address: '127.0.0.1' }, ports: { 'vmess-tcp': await freePort() } });
  dest = await startCountingServer();
}, 180_000);

afterAll(async () => {
  if (skipReason) return;
  await run(['--purge', '--prefix', root]).catch(() => {});
  await cp?.stop();
  await dest?.close();
  await proxy?.close();
  if (work) rmSync(work, { recursive: true, force: true });
});

/** `bundle-app --self-contained` of the agent as `version` into `out`. */
function build(version: string, out: string): void {
  execFileSync(
    process.execPath,
    [resolve(APP, '../../infra/bundle-app.mjs'), 'src/main.ts', out, '--self-contained', `--version=${version}`],
    {
      cwd: APP,
      stdio: 'pipe',
    },
  );
  rmSync(join(out, 'meta.json'), { force: true });
}

const env = () => ({
  PATH: process.env.PATH ?? '/usr/bin:/bin',
  SVC_SYSTEMCTL: STAND_IN,
  SVC_SYSTEMCTL_UNIT_DIR: join(root, 'etc/systemd/system'),
  SVC_SYSTEMCTL_STATE: standInState(),
});

/** A shell line as an operator runs it; its output and exit code. */
function shell(line: string): Promise<{ code: number; out: string }> {
  return new Promise((resolvePromise) => {
    const child = spawn('sh', ['-c', line], { env: env(), stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (b: Buffer) => {
      out += b.toString();
    });
    child.stderr.on('data', (b: Buffer) => {
      out += b.toString();
    });
    child.on('exit', (code) => resolvePromise({ code: code ?? -1, out }));
  });
}

/** The install script from the control plane with these arguments. */
const run = (args: string[]) => shell(`curl -fsSL ${proxy.url}/agent/install.sh | sh -s -- ${args.join(' ')}`);

/** The printed line, verbatim, with the options an operator appends for Debian's v2ray and the scratch root. */
const printedLine = () => `${fleet.enroll.install_command} --engine-bin ${V2RAY} --engine-api v2ray --prefix ${root}`;

const node = async () => (await cp.api.get(`/api/v1/nodes/${fleet.node.id}`)).body;
const mainPid = () => Number(readFileSync(join(standInState(), 'svc-agent.service.mainpid'), 'utf8'));
const enginePid = () => (JSON.parse(readFileSync(join(root, 'var/lib/svc-agent/engine/engine.json'), 'utf8')) as { pid: number }).pid;
const uidOf = (pid: number) => Number(/^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]);
const agentLog = () => readFileSync(join(standInState(), 'svc-agent.service.log'), 'utf8');
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** Every file under `dir`, relative to it. */
function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => !e.isDirectory())
    .map((e) => relative(dir, join(e.parentPath, e.name)))
    .sort();
}

async function waitForApplied(what: string): Promise<Record<string, any>> {
  return eventually(
    async () => {
      const n = await node();
      return n.connectivity === 'online' && n.applied_revision > 0 && n.applied_revision >= n.desired_revision ? n : undefined;
    },
    `${what} (agent log:\n${existsSync(join(standInState(), 'svc-agent.service.log')) ? agentLog().slice(-3000) : ''})`,
    60_000,
  );
}

describe.skipIf(skipReason)('the install script, run as the enroll-token answer prints it', () => {
  it('the enroll-token answer prints the one line: the script from this control plane, the token and the CA hash as its arguments', () => {
    expect(fleet.enroll.install_command).toBe(
      `curl -fsSL ${proxy.url}/agent/install.sh | sh -s -- --token ${fleet.enroll.token} --ca-sha256 ${fleet.enroll.ca_cert_sha256}`,
    );
  });

  it('a tampered agent is refused before anything changes (and the token stays unused)', async () => {
    proxy.tamper = true;
    const r = await shell(printedLine());
    proxy.tamper = false;
    expect(r.code, r.out).not.toBe(0);
    expect(r.out).toMatch(/the agent from \S+ does not match its pinned SHA-256 .*refused, nothing was changed/);
    expect(filesUnder(root)).toEqual([]);
    expect((await node()).enrolled).toBe(false);
  });

  it('installs the verified agent, enrolls, runs Debian’s v2ray as the dedicated user: the node is online with its revision applied', async () => {
    const r = await shell(printedLine());
    expect(r.code, r.out).toBe(0);
    expect(r.out).toContain(`verified SHA-256 ${sha256Of(join(dist, `svc-agent-${AGENT_VERSION}.mjs`))}`);
    expect(r.out).toContain('enrolled with');
    const opt = join(root, 'opt/svc-agent');
    expect(readlinkSync(join(opt, 'current.mjs'))).toBe(`svc-agent-${AGENT_VERSION}.mjs`);
    expect(readFileSync(join(opt, `svc-agent-${AGENT_VERSION}.mjs`))).toEqual(readFileSync(join(dist, `svc-agent-${AGENT_VERSION}.mjs`)));
    const state = statSync(join(root, 'var/lib/svc-agent'));
    expect(state.mode & 0o777).toBe(0o700);
    const uid = Number(execFileSync('id', ['-u', 'svc-agent']).toString().trim());
    expect(state.uid).toBe(uid);
    const unit = readFileSync(join(root, 'etc/systemd/system/svc-agent.service'), 'utf8');
    expect(unit).toMatch(/^User=svc-agent$/m);
    expect(unit).toMatch(/^AmbientCapabilities=CAP_NET_ADMIN CAP_NET_BIND_SERVICE$/m);
    expect(unit).toMatch(/^KillMode=process$/m);
    expect(unit).toMatch(/^StartLimitIntervalSec=0$/m);
    expect(unit).toMatch(/^ExecStart=\/\S+ \S+\/opt\/svc-agent\/current\.mjs run$/m);
    expect(existsSync(join(standInState(), 'svc-agent.service.enabled'))).toBe(true);

    const shown = await waitForApplied('the node online and applied');
    expect(shown.agent_version).toBe(AGENT_VERSION);
    // The agent and the engine it started run as svc-agent, not root.
    expect(uidOf(mainPid())).toBe(uid);
    expect(uidOf(enginePid())).toBe(uid);
  }, 120_000);

  it('running it again upgrades in place: the same node id, the engine kept serving, every byte sent before and after counted', async () => {
    const identity = readFileSync(join(root, 'var/lib/svc-agent/identity.json'), 'utf8');
    const engine = enginePid();
    const agentBefore = mainPid();
    const link = decodeSubscriptionBody((await fetchSubscription(fleet.subscriptionUrl)).body).map(parseShareLink)[0];
    if (!link) throw new Error('no link');
    const client = await clientFor(link);
    let running = true;
    let requests = 0;
    const traffic = (async () => {
      while (running) {
        // A request that stalls is given up (its bytes still count at both ends) rather than holding the loop.
        const res = await httpGetThroughProxy(client.port, `${dest.url}/bytes/${30_000 + (requests % 5) * 7_000}`, {
          signal: AbortSignal.timeout(10_000),
        }).catch(() => null);
        if (res?.status === 200) requests++;
      }
    })();
    let again: { code: number; out: string };
    const began = Date.now();
    try {
      await sleep(2000);
      // The same line again: the token was used, the identity is kept.
      again = await shell(printedLine());
      await sleep(2500);
    } finally {
      running = false;
      await traffic;
      await client.stop();
    }
    console.info(`install.sh again: traffic for ${Date.now() - began} ms, ${requests} requests`);
    expect(again.code, again.out).toBe(0);
    expect(again.out).toContain('already enrolled');
    expect(again.out).toContain('hand over');
    expect(mainPid()).not.toBe(agentBefore);
    expect(enginePid()).toBe(engine);
    expect(readFileSync(join(root, 'var/lib/svc-agent/identity.json'), 'utf8')).toBe(identity);
    expect(requests).toBeGreaterThan(10);
    await waitForApplied('the node back online');
    const nodes = (await cp.api.get('/api/v1/nodes')).body;
    expect(nodes.items.map((n: { id: string }) => n.id)).toEqual([fleet.node.id]);

    const sent = () => dest.totals().uplink + dest.totals().downlink;
    const usage = await eventually(
      async () => {
        const u = await subscriptionUsage(cp.api, fleet.subscription.id);
        return u.used_bytes >= sent() ? u : undefined;
      },
      'every byte credited',
      60_000,
    );
    await sleep(2500);
    const final = await subscriptionUsage(cp.api, fleet.subscription.id);
    expect(final.used_bytes).toBe(usage.used_bytes);
    expect(final.uplink_bytes).toBe(dest.totals().uplink);
    expect(final.downlink_bytes).toBe(dest.totals().downlink);
  }, 120_000);

  it('an upgrade from the admin API moves the node to the new release while a client’s connection through the engine stays up', async () => {
    serve(NEXT);
    const link = decodeSubscriptionBody((await fetchSubscription(fleet.subscriptionUrl)).body).map(parseShareLink)[0];
    if (!link) throw new Error('no link');
    const client = await clientFor(link);
    const engine = enginePid();
    const stream = streamThroughProxy(client.port, `${dest.url}/stream`);
    try {
      expect((await stream.opened).status).toBe(200);
      await sleep(500);
      const asked = await cp.api.post(`/api/v1/nodes/${fleet.node.id}/upgrade-agent`, {});
      expect(asked.status, asked.text).toBe(202);
      expect(asked.body.version).toBe(NEXT);
      expect((await node()).agent_upgrade).toMatchObject({ version: NEXT, state: 'pending' });
      const upgraded = await eventually(
        async () => {
          const n = await node();
          return n.agent_version === NEXT && n.agent_upgrade?.state === 'succeeded' ? n : undefined;
        },
        `the node on ${NEXT} (agent log:\n${agentLog().slice(-3000)})`,
        90_000,
      );
      expect(upgraded.agent_upgrade.error).toBeNull();
      expect(readlinkSync(join(root, 'opt/svc-agent/current.mjs'))).toBe(`svc-agent-${NEXT}.mjs`);
      // The release before stays for a rollback.
      expect(existsSync(join(root, `opt/svc-agent/svc-agent-${AGENT_VERSION}.mjs`))).toBe(true);
      // The engine kept serving: the same process, the client's connection still up and flowing.
      expect(enginePid()).toBe(engine);
      const before = stream.received();
      await sleep(1000);
      expect(stream.received()).toBeGreaterThan(before);
      const ended = await Promise.race([stream.ended, sleep(100).then(() => null)]);
      expect(ended).toBeNull();
    } finally {
      stream.close();
      await client.stop();
    }
  }, 150_000);

  it('a failed upgrade (a tampered download) leaves the running release in place and says why', async () => {
    serve(bumpedAgain());
    proxy.tamper = true;
    try {
      const asked = await cp.api.post(`/api/v1/nodes/${fleet.node.id}/upgrade-agent`, {});
      expect(asked.status, asked.text).toBe(202);
      const failed = await eventually(
        async () => {
          const n = await node();
          return n.agent_upgrade?.state === 'failed' ? n : undefined;
        },
        'the upgrade failed',
        60_000,
      );
      expect(failed.agent_upgrade.error).toMatch(/does not match its SHA-256/);
      expect(failed.agent_version).toBe(NEXT);
      expect(readlinkSync(join(root, 'opt/svc-agent/current.mjs'))).toBe(`svc-agent-${NEXT}.mjs`);
      expect(failed.connectivity).toBe('online');
    } finally {
      proxy.tamper = false;
    }
  }, 90_000);

  it('--uninstall leaves only the state directory; --purge removes that too', async () => {
    const engine = enginePid();
    const r = await run(['--uninstall', '--prefix', root]);
    expect(r.code, r.out).toBe(0);
    expect(alive(engine)).toBe(false);
    const left = filesUnder(root);
    expect(left.length).toBeGreaterThan(0);
    expect(left.filter((f) => !f.startsWith('var/lib/svc-agent/'))).toEqual([]);
    expect(left).toContain('var/lib/svc-agent/identity.json');
    const purged = await run(['--purge', '--prefix', root]);
    expect(purged.code, purged.out).toBe(0);
    expect(filesUnder(root)).toEqual([]);
  }, 60_000);

  it('installs Xray and Node.js from release archives only when they match their SHA-256 (mirrors: --xray-archive-url, --node-archive-url), and removes them on --purge', async () => {
    const root2 = join(work, 'root2');
    const zip = join(work, 'Xray-linux-64.zip');
    // A stand-in archive laid out as Xray's: the binary and the geo files.
    execFileSync('python3', [
      '-c',
      'import sys, zipfile\nwith zipfile.ZipFile(sys.argv[1], "w") as z:\n  z.writestr("xray", "#!/bin/sh\\necho Xray 26.7.11\\n")\n  z.writestr("geoip.dat", "ip")\n  z.writestr("geosite.dat", "site")\n  z.writestr("LICENSE", "MPL-2.0")',
      zip,
    ]);
    const sum = sha256Of(zip);
    // And a stand-in Node.js archive laid out as nodejs.org's (node-v…/bin/node), running this machine's node.
    const nodeTree = join(work, 'node-archive');
    execFileSync('sh', [
      '-c',
      `mkdir -p ${nodeTree}/node-v20.19.5-linux-x64/bin && printf '#!/bin/sh\\nexec ${process.execPath} "$@"\\n' > ${nodeTree}/node-v20.19.5-linux-x64/bin/node && chmod 755 ${nodeTree}/node-v20.19.5-linux-x64/bin/node && tar -cJf ${work}/node.tar.xz -C ${nodeTree} node-v20.19.5-linux-x64`,
    ]);
    const nodeSum = sha256Of(join(work, 'node.tar.xz'));
    const line = (sha: string, nodeSha = nodeSum) =>
      `curl -fsSL ${proxy.url}/agent/install.sh | sh -s -- --no-start --prefix ${root2} --xray-archive-url file://${zip} --xray-sha256 ${sha} --node-archive-url file://${work}/node.tar.xz --node-sha256 ${nodeSha}`;

    const badNode = await shell(line(sum, '1'.repeat(64)));
    expect(badNode.code, badNode.out).not.toBe(0);
    expect(badNode.out).toContain('the Node.js archive from');
    expect(badNode.out).toContain('does not match its pinned SHA-256');
    expect(existsSync(join(root2, 'opt/svc-agent-node'))).toBe(false);
    expect(existsSync(join(root2, 'opt/svc-agent'))).toBe(false);

    const refused = await shell(line('0'.repeat(64)));
    expect(refused.code, refused.out).not.toBe(0);
    expect(refused.out).toContain('does not match its pinned SHA-256');
    // Nothing changes until every download is verified: not the Node.js verified before it either.
    expect(filesUnder(root2)).toEqual([]);

    const r = await shell(line(sum));
    expect(r.code, r.out).toBe(0);
    expect(r.out).toContain('archive SHA-256 verified');
    expect(r.out).toContain('without enrolling or starting');
    expect(statSync(join(root2, 'usr/local/bin/xray')).mode & 0o777).toBe(0o755);
    expect(filesUnder(join(root2, 'usr/local/share/xray'))).toEqual(['geoip.dat', 'geosite.dat']);
    const agentEnv = readFileSync(join(root2, 'etc/svc-agent/agent.env'), 'utf8');
    expect(agentEnv).toContain(`SVC_AGENT_ENGINE_BIN=${join(root2, 'usr/local/bin/xray')}\n`);
    expect(agentEnv).toContain('SVC_AGENT_ENGINE_API=xray\n');
    expect(existsSync(join(root2, 'var/lib/svc-agent/identity.json'))).toBe(false);
    // The agent runs on the Node.js the script installed (root's, beside the agent).
    expect(r.out).toContain(`installed Node.js ${process.version} at ${join(root2, 'opt/svc-agent-node')}`);
    expect(statSync(join(root2, 'opt/svc-agent-node/bin/node')).uid).toBe(0);
    const unit = readFileSync(join(root2, 'etc/systemd/system/svc-agent.service'), 'utf8');
    expect(unit).toContain(`ExecStart=${join(root2, 'opt/svc-agent-node/bin/node')} ${join(root2, 'opt/svc-agent/current.mjs')} run`);
    // The same archives again are not downloaded again.
    const again = await shell(line(sum));
    expect(again.out).toContain('Xray from the archive');
    expect(again.out).toMatch(/Node\.js from the archive \S+ is already installed/);

    const purged = await shell(`curl -fsSL ${proxy.url}/agent/install.sh | sh -s -- --purge --prefix ${root2}`);
    expect(purged.code, purged.out).toBe(0);
    expect(filesUnder(root2)).toEqual([]);
  }, 60_000);
});

/** A third release, for the failed upgrade (the node runs NEXT by then). */
function bumpedAgain(): string {
  const v = NEXT.replace('-test.1', '-test.2');
  build(v, join(work, 'third'));
  return v;
}

/** Makes the control plane serve `version` (one release in its directory at a time). */
function serve(version: string): void {
  const from = version === AGENT_VERSION ? dist : version === NEXT ? join(work, 'next') : join(work, 'third');
  const files = [`svc-agent-${version}.mjs`, `svc-agent-${version}.mjs.sha256`];
  if (from !== dist) {
    for (const f of readdirSync(dist)) rmSync(join(dist, f));
    for (const f of files) copyFileSync(join(from, f), join(dist, f));
  }
}

function sha256Of(file: string): string {
  return execFileSync('sha256sum', [file]).toString().split(' ')[0] as string;
}

interface TamperingProxy {
  url: string;
  tamper: boolean;
  target(port: number): void;
  close(): Promise<void>;
}

/** The control plane's public address: forwards everything, and flips a byte of agent files when told. */
async function startTamperingProxy(): Promise<TamperingProxy> {
  let upstream = 0;
  const state = { tamper: false };
  const server: Server = createServer((req, res) => {
    const up = request({ host: '127.0.0.1', port: upstream, method: req.method, path: req.url, headers: req.headers }, (upRes) => {
      const isAgentFile = /^\/agent\/[^/]+\/svc-agent-[^/]+\.mjs$/.test(req.url ?? '');
      if (!(state.tamper && isAgentFile)) {
        res.writeHead(upRes.statusCode ?? 502, upRes.headers);
        upRes.pipe(res);
        return;
      }
      const chunks: Buffer[] = [];
      upRes.on('data', (c: Buffer) => chunks.push(c));
      upRes.on('end', () => {
        const body = Buffer.concat(chunks);
        // A comment changed near the end: the file still runs, only its checksum tells.
        body[body.length - 2] = (body[body.length - 2] as number) ^ 1;
        res.writeHead(upRes.statusCode ?? 502, { ...upRes.headers, 'content-length': String(body.length) });
        res.end(body);
      });
    });
    up.on('error', () => {
      res.writeHead(502);
      res.end();
    });
    req.pipe(up);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    get tamper() {
      return state.tamper;
    },
    set tamper(v: boolean) {
      state.tamper = v;
    },
    target(p: number) {
      upstream = p;
    },
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
