// A real webhook receiver on 127.0.0.1 for the system tests: a Node HTTP server that records
// every delivery, answers 200, and can be stopped and started again on the same port (a
// receiver that is down refuses connections).
import { createServer, type Server } from 'node:http';
import { Webhook } from 'standardwebhooks';

export interface ReceivedDelivery {
  /** The path it was sent to (one receiver may stand for several hooks). */
  path: string;
  headers: Record<string, string>;
  body: string;
  json: Record<string, unknown>;
}

export class WebhookReceiver {
  readonly received: ReceivedDelivery[] = [];
  private server: Server | null = null;

  constructor(readonly port: number) {}

  get url(): string {
    return this.urlFor('hook');
  }

  urlFor(name: string): string {
    return `http://127.0.0.1:${this.port}/${name}`;
  }

  async start(): Promise<void> {
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : (v ?? '')]));
        this.received.push({ path: req.url ?? '', headers, body, json: JSON.parse(body) as Record<string, unknown> });
        res.writeHead(200, { 'Content-Type': 'text/plain' }).end('ok');
      });
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.server = server;
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /**
   * Every delivery, checked as a receiver would: the Standard Webhooks signature with the
   * `standardwebhooks` package, and GitLab's secret token. Throws on the first that fails.
   */
  verifiedDeliveries(signingSecret: string, token: string, path?: string): ReceivedDelivery[] {
    const deliveries = this.received.filter((d) => path === undefined || d.path === path);
    for (const d of deliveries) verifyDelivery(d, signingSecret, token);
    return deliveries;
  }

  /** The deliveries, one per `Idempotency-Key` (the first of each), as a receiver de-duplicates. */
  unique(): ReceivedDelivery[] {
    const seen = new Map<string, ReceivedDelivery>();
    for (const d of this.received) {
      const key = d.headers['idempotency-key'] ?? '';
      if (!seen.has(key)) seen.set(key, d);
    }
    return [...seen.values()];
  }
}

/** Checks one delivery as a receiver would; throws when it is not genuine. */
export function verifyDelivery(d: ReceivedDelivery, signingSecret: string, token: string): void {
  new Webhook(signingSecret).verify(d.body, d.headers);
  if (d.headers['x-gitlab-token'] !== token) throw new Error(`X-Gitlab-Token is ${d.headers['x-gitlab-token']}`);
}

/** Polls `check` until it returns a value that is not undefined, or fails after `ms`. */
export async function eventually<T>(what: string, check: () => T | undefined | Promise<T | undefined>, ms = 30_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
