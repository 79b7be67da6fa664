// Load generation for the benchmarks: wrk (C, light on the CPU the server also needs) when
// installed, else autocannon. Both report requests/s and latency percentiles.
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';

export interface LoadResult {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
}

export interface LoadSpec {
  url: string;
  /** When given, each request asks for one of these paths (on url's origin), picked at random. */
  paths?: string[];
  seconds: number;
  connections: number;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
}

const hasWrk = (() => {
  try {
    execFileSync('wrk', ['--version'], { stdio: 'ignore' });
    return true;
  } catch (err) {
    // wrk --version exits 1 after printing; only a missing binary throws ENOENT.
    return (err as NodeJS.ErrnoException).code !== 'ENOENT';
  }
})();

export const loadClient = hasWrk ? 'wrk' : 'autocannon';

export async function load(spec: LoadSpec): Promise<LoadResult> {
  return hasWrk ? wrk(spec) : cannon(spec);
}

async function cannon(spec: LoadSpec): Promise<LoadResult> {
  const r = await autocannon({
    url: spec.url,
    ...(spec.paths?.length
      ? {
          requests: [
            {
              setupRequest: ((req: Record<string, unknown>) => ({
                ...req,
                path: spec.paths?.[Math.floor(Math.random() * (spec.paths?.length ?? 1))],
              })) as never,
            },
          ],
        }
      : {}),
    duration: spec.seconds,
    connections: spec.connections,
    method: spec.method ?? 'GET',
    headers: spec.headers ?? {},
    ...(spec.body ? { body: spec.body } : {}),
  });
  return { rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, errors: r.non2xx + r.errors };
}

function wrk(spec: LoadSpec): Promise<LoadResult> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-wrk-'));
  const script = join(dir, 'req.lua');
  const lines = [`wrk.method = ${JSON.stringify(spec.method ?? 'GET')}`];
  for (const [k, v] of Object.entries(spec.headers ?? {})) lines.push(`wrk.headers[${JSON.stringify(k)}] = ${JSON.stringify(v)}`);
  if (spec.body) lines.push(`wrk.body = ${JSON.stringify(spec.body)}`);
  if (spec.paths?.length) {
    lines.push(`local paths = { ${spec.paths.map((p) => JSON.stringify(p)).join(', ')} }`);
    lines.push('math.randomseed(os.time())', 'request = function() return wrk.format(nil, paths[math.random(#paths)]) end');
  }
  // Count non-2xx answers as errors.
  lines.push('local bad = 0', 'function response(status) if status >= 300 then bad = bad + 1 end end');
  lines.push('function done() io.stderr:write("NON2XX " .. bad .. "\\n") end');
  writeFileSync(script, lines.join('\n'));
  const threads = Math.min(2, spec.connections);
  return new Promise((resolve, reject) => {
    const p = spawn('wrk', [
      '-t',
      String(threads),
      '-c',
      String(spec.connections),
      '-d',
      `${spec.seconds}s`,
      '--latency',
      '-s',
      script,
      spec.url,
    ]);
    let out = '';
    let err = '';
    p.stdout.on('data', (d) => {
      out += d;
    });
    p.stderr.on('data', (d) => {
      err += d;
    });
    p.on('error', reject);
    p.on('close', () => {
      const num = (re: RegExp) => Number(re.exec(out)?.[1] ?? Number.NaN);
      const ms = (re: RegExp) => {
        const m = re.exec(out);
        if (!m) return Number.NaN;
        const v = Number(m[1]);
        return m[2] === 'us' ? v / 1000 : m[2] === 's' ? v * 1000 : v;
      };
      const socketErrors = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
      resolve({
        rps: num(/Requests\/sec:\s+([\d.]+)/),
        p50: ms(/50%\s+([\d.]+)(us|ms|s)/),
        p99: ms(/99%\s+([\d.]+)(us|ms|s)/),
        errors: Number(/NON2XX (\d+)/.exec(err)?.[1] ?? 0) + (socketErrors ? socketErrors.slice(1).reduce((a, b) => a + Number(b), 0) : 0),
      });
    });
  });
}
