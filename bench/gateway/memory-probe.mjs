// Preloaded into the control-plane process by the gateway benchmarks (NODE_OPTIONS=--import):
// on SIGUSR2 it prints process.memoryUsage() as one JSON line on stdout, so the bench can split
// the RSS into the JS heap, external/array buffers and the rest (native: TLS, HTTP/2). It does
// nothing else; the process is the unmodified apps/control-plane/src/main.ts.
process.on('SIGUSR2', () => {
  process.stdout.write(`${JSON.stringify({ msg: 'bench memory', ...process.memoryUsage() })}\n`);
});
