#!/usr/bin/env node
// A stand-in for systemctl where systemd cannot run (this test machine: no systemd as PID 1).
// install.sh calls it as it would call systemctl (SVC_SYSTEMCTL names it); it reads the unit file
// install.sh wrote and runs it the way systemd would for what that unit says:
//   - ExecStart under User=/Group= with the unit's capabilities (setpriv: ambient and bounding
//     set, as AmbientCapabilities= and CapabilityBoundingSet= do), EnvironmentFile= read, the
//     service's stdout and stderr appended to <state>/<unit>.log (the journal);
//   - Restart=always with RestartSec=: a supervisor process starts the main process again
//     whenever it exits, until `stop`;
//   - KillMode=process: `stop` signals the main process only (SIGTERM, SIGKILL after
//     TimeoutStopSec=), never what it started (the engine);
//   - daemon-reload is implicit: every start reads the unit file again.
// Verbs: daemon-reload, enable, disable, start, stop, restart, is-active [--quiet],
// show --property MainPID --value. Units live in SVC_SYSTEMCTL_UNIT_DIR, state in SVC_SYSTEMCTL_STATE.
import { spawn } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const UNIT_DIR = process.env.SVC_SYSTEMCTL_UNIT_DIR;
const STATE = process.env.SVC_SYSTEMCTL_STATE;
if (!UNIT_DIR || !STATE) {
  console.error('systemctl stand-in: SVC_SYSTEMCTL_UNIT_DIR and SVC_SYSTEMCTL_STATE are required');
  process.exit(2);
}
mkdirSync(STATE, { recursive: true });

const args = process.argv.slice(2);
const flags = new Set(args.filter((a) => a.startsWith('--')));
const words = args.filter((a) => !a.startsWith('--') && a !== 'MainPID');
const [verb, unitArg] = words;
const unit = unitArg ? (unitArg.endsWith('.service') ? unitArg : `${unitArg}.service`) : '';
const file = (what) => join(STATE, `${unit}.${what}`);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const readPid = (what) => {
  try {
    const pid = Number(readFileSync(file(what), 'utf8'));
    return Number.isInteger(pid) && pid > 0 ? pid : 0;
  } catch {
    return 0;
  }
};
const alive = (pid) => {
  if (!pid) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** The unit file's [Service] settings that the stand-in honours. */
function readUnit() {
  const text = readFileSync(join(UNIT_DIR, unit), 'utf8');
  const s = { env: {}, restartSec: 0.1, timeoutStopSec: 90, caps: [], bounding: null, user: null, group: null, execStart: null };
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    const eq = line.indexOf('=');
    if (line.startsWith('#') || eq < 0) continue;
    const [k, v] = [line.slice(0, eq), line.slice(eq + 1)];
    if (k === 'ExecStart') s.execStart = v.split(/\s+/);
    else if (k === 'User') s.user = v;
    else if (k === 'Group') s.group = v;
    else if (k === 'RestartSec') s.restartSec = Number(v);
    else if (k === 'TimeoutStopSec') s.timeoutStopSec = Number(v);
    else if (k === 'AmbientCapabilities') s.caps = v.split(/\s+/).map((c) => c.replace(/^CAP_/, '').toLowerCase());
    else if (k === 'CapabilityBoundingSet') s.bounding = v.split(/\s+/).map((c) => c.replace(/^CAP_/, '').toLowerCase());
    else if (k === 'Environment') {
      const i = v.indexOf('=');
      s.env[v.slice(0, i)] = v.slice(i + 1);
    } else if (k === 'EnvironmentFile') {
      for (const l of readFileSync(v, 'utf8').split('\n')) {
        const m = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/.exec(l.trim());
        if (m) s.env[m[1]] = m[2];
      }
    }
  }
  if (!s.execStart) throw new Error(`${unit}: no ExecStart`);
  return s;
}

async function supervise() {
  writeFileSync(file('supervisor'), String(process.pid));
  while (!existsSync(file('stopping'))) {
    const s = readUnit();
    const caps = s.caps.map((c) => `+${c}`).join(',');
    const priv = s.user
      ? [
          'setpriv',
          '--reuid',
          s.user,
          '--regid',
          s.group ?? s.user,
          '--init-groups',
          ...(caps ? ['--inh-caps', caps, '--ambient-caps', caps] : []),
          ...(s.bounding ? ['--bounding-set', `-all,${s.bounding.map((c) => `+${c}`).join(',')}`] : []),
          '--',
        ]
      : [];
    const cmd = [...priv, ...s.execStart];
    const log = openSync(join(STATE, `${unit}.log`), 'a');
    const child = spawn(cmd[0], cmd.slice(1), {
      stdio: ['ignore', log, log],
      env: { PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin', LANG: 'C.UTF-8', ...s.env },
    });
    closeSync(log);
    await new Promise((r) => child.once('spawn', r));
    writeFileSync(file('mainpid'), String(child.pid));
    const code = await new Promise((r) => child.once('exit', (c, sig) => r(c ?? sig)));
    writeFileSync(join(STATE, `${unit}.exits`), `${code}\n`, { flag: 'a' });
    rmSync(file('mainpid'), { force: true });
    if (existsSync(file('stopping'))) break;
    await sleep(s.restartSec * 1000);
  }
  rmSync(file('supervisor'), { force: true });
  rmSync(file('stopping'), { force: true });
}

function start() {
  if (alive(readPid('supervisor'))) return;
  rmSync(file('stopping'), { force: true });
  const child = spawn(process.execPath, [process.argv[1], '__supervise', unit], { detached: true, stdio: 'ignore', env: process.env });
  child.unref();
}

async function waitFor(probe, ms) {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (probe()) return true;
    await sleep(50);
  }
  return probe();
}

async function stop() {
  const sup = readPid('supervisor');
  if (!alive(sup)) return;
  writeFileSync(file('stopping'), '');
  const main = readPid('mainpid');
  if (alive(main)) process.kill(main, 'SIGTERM');
  const timeout = readUnit().timeoutStopSec * 1000;
  if (!(await waitFor(() => !alive(readPid('mainpid')), timeout))) {
    const pid = readPid('mainpid');
    if (alive(pid)) process.kill(pid, 'SIGKILL');
  }
  await waitFor(() => !alive(sup), 5000);
}

switch (verb) {
  case '__supervise':
    await supervise();
    break;
  case 'daemon-reload':
    break;
  case 'enable':
    writeFileSync(file('enabled'), '');
    break;
  case 'disable':
    rmSync(file('enabled'), { force: true });
    break;
  case 'start':
    start();
    await waitFor(() => alive(readPid('mainpid')), 10_000);
    break;
  case 'stop':
    await stop();
    break;
  case 'restart':
    await stop();
    start();
    await waitFor(() => alive(readPid('mainpid')), 10_000);
    break;
  case 'is-active': {
    const active = alive(readPid('supervisor')) && alive(readPid('mainpid'));
    if (!flags.has('--quiet')) console.log(active ? 'active' : 'inactive');
    process.exit(active ? 0 : 3);
    break;
  }
  case 'show':
    // `show --property MainPID --value <unit>`
    console.log(alive(readPid('mainpid')) ? readPid('mainpid') : 0);
    break;
  case 'is-enabled':
    process.exit(existsSync(file('enabled')) ? 0 : 1);
    break;
  default:
    console.error(`systemctl stand-in: ${verb} is not stood in for`);
    process.exit(1);
}
