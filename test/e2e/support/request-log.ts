// A recording proxy in front of a Knock server: every request that reaches the server through it,
// with its answer's status, so a test can say exactly what a client asked (e.g. that the
// extension's poll was one request, and a 304 the second time). The server is started with the
// proxy's address as its PUBLIC_URL, so its pages, redirects and OAuth issuer (RFC 8414) name it.

import { createServer, request, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  method: string;
  /** Path and query, as sent. */
  path: string;
  status: number;
  ifNoneMatch: string | null;
}

export interface RequestLog {
  url: string;
  /** Every request so far, in the order their answers began. */
  requests: RecordedRequest[];
  /** Where requests go from now on (the server, once it runs). */
  forwardTo(url: string): void;
  close(): Promise<void>;
}

const single = (value: IncomingHttpHeaders[string]) => (Array.isArray(value) ? value.join(', ') : (value ?? null));

export async function startRequestLog(): Promise<RequestLog> {
  const requests: RecordedRequest[] = [];
  let target: URL | null = null;
  const proxy = createServer((incoming, outgoing) => {
    if (!target) {
      outgoing.writeHead(503).end('the server is not running yet');
      return;
    }
    const upstream = request(
      { host: target.hostname, port: target.port, method: incoming.method, path: incoming.url, headers: incoming.headers },
      (answer) => {
        requests.push({
          method: incoming.method ?? 'GET',
          path: incoming.url ?? '/',
          status: answer.statusCode ?? 0,
          ifNoneMatch: single(incoming.headers['if-none-match']),
        });
        outgoing.writeHead(answer.statusCode ?? 502, answer.rawHeaders);
        answer.pipe(outgoing);
      },
    );
    upstream.on('error', () => (outgoing.headersSent ? outgoing.destroy() : outgoing.writeHead(502).end()));
    incoming.pipe(upstream);
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  const { port } = proxy.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    forwardTo: (url) => (target = new URL(url)),
    close: () =>
      new Promise<void>((resolve) => {
        proxy.closeAllConnections();
        proxy.close(() => resolve());
      }),
  };
}
