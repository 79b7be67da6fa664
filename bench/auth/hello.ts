// Baseline: a bare node:http hello-world in its own process.
import { createServer } from 'node:http';
import { answerParent } from '../common/children.ts';

const server = createServer((_req, res) => {
  res.writeHead(200, { 'content-type': 'text/plain' });
  res.end('hello');
});
server.listen(0, '127.0.0.1', () => {
  const addr = server.address();
  answerParent(
    { url: `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}` },
    () => new Promise((r) => server.close(() => r())),
  );
});
