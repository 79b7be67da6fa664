// Traffic for the speed-cap tests, run inside network namespaces (`ip netns exec NS node traffic.mjs …`).
//   serve HOST PORT                                 'D' → sends until the client closes; 'U' → counts what
//                                                   arrives and reports `ms bytes` every 100 ms as a line
//   down|up HOST PORT LOCAL_HOST LOCAL_PORT SECONDS [ID] [hold]  prints {"samples":[[ms, bytes], …]} (bytes received
//                                                   by the client for down, by the server for up); the server
//                                                   also prints {"id":ID,"samples":…} when an upload closes
//                                                   (through a proxy its reports come back late: the capped
//                                                   user's upload queue holds the ACKs of the way back);
//                                                   with `hold`, an upload sends its first bytes (the
//                                                   engine's access line) and waits for a line on stdin
//                                                   before it pumps; SECONDS count from then
import { createConnection, createServer } from 'node:net';

const [mode, host, port, localAddress, localPort, seconds, id = '0', hold] = process.argv.slice(2);
const chunk = Buffer.alloc(64 * 1024, 0x5a);

if (mode === 'serve') {
  createServer((s) => {
    s.on('error', () => {});
    s.once('data', (first) => {
      if (first[0] === 0x44) {
        const pump = () => {
          while (!s.destroyed && s.write(chunk));
        };
        s.on('drain', pump);
        pump();
      } else {
        const t0 = Date.now();
        const id = String.fromCharCode(first[1] ?? 0x30);
        let n = first.length - 2;
        const samples = [];
        s.on('data', (d) => {
          n += d.length;
        });
        const t = setInterval(() => {
          samples.push([Date.now() - t0, n]);
          if (!s.destroyed) s.write(`${Date.now() - t0} ${n}\n`);
        }, 100);
        s.on('close', () => {
          clearInterval(t);
          console.log(JSON.stringify({ id, samples }));
        });
      }
    });
  }).listen(Number(port), host, () => console.log('listening'));
} else {
  const t0 = Date.now();
  const samples = [];
  const finish = () => {
    if (tick) clearInterval(tick);
    console.log(JSON.stringify({ samples }));
    s.destroy();
    process.exit(0);
  };
  const s = createConnection({ host, port: Number(port), localAddress, localPort: Number(localPort) }, () => {
    s.write(mode === 'down' ? 'D' : `U${id}`);
    if (mode === 'up') {
      const pump = () => {
        while (!s.destroyed && s.write(chunk));
      };
      const start = () => {
        s.on('drain', pump);
        pump();
        setTimeout(finish, Number(seconds) * 1000);
      };
      if (hold === 'hold') process.stdin.once('data', start);
      else start();
    } else setTimeout(finish, Number(seconds) * 1000);
  });
  let got = 0;
  let text = '';
  s.on('data', (d) => {
    if (mode === 'down') {
      got += d.length;
      return;
    }
    text += d.toString();
    const lines = text.split('\n');
    text = lines.pop() ?? '';
    // The server's own clock: these lines come back behind the client's queued data.
    for (const l of lines) samples.push(l.split(' ').map(Number));
  });
  const tick = mode === 'down' ? setInterval(() => samples.push([Date.now() - t0, got]), 100) : null;
  s.on('error', (err) => {
    console.error(String(err));
    process.exit(1);
  });
}
