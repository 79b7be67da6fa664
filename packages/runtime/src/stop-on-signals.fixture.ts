// A process that stops the way every deployable does (stopOnSignals), for stop-on-signals.test.ts:
// `node --import tsx stop-on-signals.fixture.ts <stop ms> <ok|fail>`.
import { stopOnSignals } from './stop-on-signals.ts';

const [ms = '0', outcome = 'ok'] = process.argv.slice(2);
stopOnSignals('fixture', async () => {
  await new Promise((r) => setTimeout(r, Number(ms)));
  if (outcome === 'fail') throw new Error('the close failed');
});
setInterval(() => {}, 60_000);
process.stdout.write('ready\n');
