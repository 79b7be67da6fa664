// Preloaded into a product process by the benchmarks when asked (BENCH_GATEWAY_NODE_OPTIONS=
// "--import=./bench/gateway/cpu-profile.mjs" plus BENCH_CPU_PROFILE=<file prefix>): V8's
// sampling profiler runs from start-up; on SIGWINCH the profile so far is written to
// <prefix>.<pid>.cpuprofile (Chrome DevTools format; timestamps in µs of the monotonic clock,
// the clock of process.hrtime in every process of the machine). `--cpu-prof` itself is not
// allowed in NODE_OPTIONS, hence this. It does nothing else; the process is otherwise unmodified.
// A process that exits on its own (the bench's agents workers, stopped at the end) also writes
// what was sampled since the last SIGWINCH to <prefix>.<pid>.exit.cpuprofile.
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';

const prefix = process.env.BENCH_CPU_PROFILE;
if (prefix) {
  const session = new Session();
  session.connect();
  const post = (method, params) =>
    new Promise((resolve, reject) => session.post(method, params, (err, r) => (err ? reject(err) : resolve(r))));
  await post('Profiler.enable');
  await post('Profiler.setSamplingInterval', { interval: 500 });
  await post('Profiler.start');
  process.on('SIGWINCH', async () => {
    const { profile } = await post('Profiler.stop');
    writeFileSync(`${prefix}.${process.pid}.cpuprofile`, JSON.stringify(profile));
    process.stdout.write(`${JSON.stringify({ msg: 'bench cpu profile written', pid: process.pid })}\n`);
    await post('Profiler.start');
  });
  // The inspector answers a same-thread session synchronously: this runs within 'exit'.
  process.on('exit', () => {
    session.post('Profiler.stop', (err, r) => {
      if (!err) writeFileSync(`${prefix}.${process.pid}.exit.cpuprofile`, JSON.stringify(r.profile));
    });
  });
}
