// `node --import tsx apps/cli/src/main.ts start`, unmodified: the testkit's spawnApp runs an
// entry file without arguments, so this file supplies `start` and loads the CLI.
process.argv.splice(2, process.argv.length - 2, 'start');
await import(new URL('../../apps/cli/src/main.ts', import.meta.url).href);
