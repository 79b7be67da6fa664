// The images' HEALTHCHECK (infra/Dockerfile): `node /usr/local/lib/svc/healthcheck.mjs http` asks
// the app's own HTTP listener for GET /readyz (200 once the database and Redis answer);
// `... tls` completes a TLS handshake with the agent gateway (the control-plane has no HTTP
// listener: a gateway that accepts TCP but cannot present its certificate is not healthy).
// Ports come from the same variables the apps read (SVC_HTTP_PORT, SVC_GRPC_PORT), so a
// container started with another port is checked on that one. Exit 0 healthy, 1 not.
import { connect } from 'node:tls';

const kind = process.argv[2] ?? 'http';
const timeoutMs = 2500;
const fail = (why) => {
  console.error(`unhealthy: ${why}`);
  process.exit(1);
};
setTimeout(() => fail(`no answer in ${timeoutMs} ms`), timeoutMs).unref();

if (kind === 'http') {
  const port = Number(process.env.SVC_HTTP_PORT || 8080);
  fetch(`http://127.0.0.1:${port}/readyz`).then(
    (res) => (res.ok ? process.exit(0) : fail(`GET /readyz answered ${res.status}`)),
    (err) => fail(err.cause?.code ?? err.message),
  );
} else if (kind === 'tls') {
  const port = Number(process.env.SVC_GRPC_PORT || 8443);
  // The certificate is signed by the installation's CA, which the container does not trust:
  // the handshake itself is what is checked, not the chain.
  const socket = connect({ host: '127.0.0.1', port, rejectUnauthorized: false, ALPNProtocols: ['h2'] });
  socket.once('secureConnect', () => {
    socket.end();
    process.exit(0);
  });
  socket.once('error', (err) => fail(err.code ?? err.message));
} else {
  fail(`unknown check "${kind}" (http | tls)`);
}
