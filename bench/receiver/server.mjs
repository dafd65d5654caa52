// The bench's webhook receiver, in a process of its own so that receiving does not slow down the
// load generator: answers each delivery at once (200, or 503 under a path in `failing`) and notes
// when it arrived (epoch ms). `/_control` and `/_stats` let the bench steer and read it.
import { createServer } from 'node:http';

const arrivals = [];
let failing = new Set();
const now = () => performance.timeOrigin + performance.now();

const server = createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const url = new URL(req.url, 'http://receiver');
    if (url.pathname === '/_control') {
      failing = new Set(JSON.parse(Buffer.concat(chunks).toString()).failing);
      return res.writeHead(204).end();
    }
    if (url.pathname === '/_stats') {
      const prefix = url.searchParams.get('prefix');
      const at = arrivals.filter((a) => a.prefix === prefix && a.status === 200).map((a) => a.at);
      return res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(at));
    }
    const prefix = url.pathname.split('/')[1];
    const status = failing.has(prefix) ? 503 : 200;
    arrivals.push({ prefix, status, at: now() });
    res.writeHead(status).end(status === 200 ? 'ok' : 'not now');
  });
});
server.listen(0, '127.0.0.1', () => process.send?.({ port: server.address().port }));
