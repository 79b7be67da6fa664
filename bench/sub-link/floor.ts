// Child process of `pnpm bench:sub-link`: the floor under the product's /sub answers. A bare
// node:http server that sends, for every request, the very answer the product gave for a
// link (its status, headers and body bytes, the gzip'd one to requests taking gzip), with a
// fresh request id each time as the product does. What the product costs above this is its
// own work; what this costs above the hello-world is the bytes and headers of the answer.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { answerParent } from '../common/children.ts';

/** One recorded answer: status, header pairs as received (less those node sets itself), body as base64. */
export interface RecordedAnswer {
  status: number;
  headers: Array<[string, string]>;
  body: string;
}

const recorded = JSON.parse(readFileSync(process.env.FLOOR_ANSWERS as string, 'utf8')) as { plain: RecordedAnswer; gzip: RecordedAnswer };
const OWN = new Set(['content-length', 'date', 'connection', 'keep-alive', 'transfer-encoding']);
const prepare = (a: RecordedAnswer) => {
  const head: string[] = [];
  let slot = -1;
  for (const [k, v] of a.headers) {
    if (OWN.has(k)) continue;
    if (k === 'x-request-id') slot = head.length + 1;
    head.push(k, v);
  }
  const body = Buffer.from(a.body, 'base64');
  head.push('Content-Length', String(body.byteLength));
  return { status: a.status, head, slot, body };
};
const plain = prepare(recorded.plain);
const gzip = prepare(recorded.gzip);

const server = createServer((req, res) => {
  const a = (req.headers['accept-encoding'] ?? '').includes('gzip') ? gzip : plain;
  const head = a.head.slice();
  if (a.slot >= 0) head[a.slot] = crypto.randomUUID();
  res.writeHead(a.status, head);
  res.end(a.body);
});
server.listen(0, '127.0.0.1', () => {
  const addr = server.address();
  answerParent(
    { url: `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}` },
    () => new Promise((r) => server.close(() => r())),
  );
});
