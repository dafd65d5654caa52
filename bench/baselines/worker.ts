// The floors the Worker is measured against, in the same runtime and process:
// `/json` — a minimal Hono Worker answering a fixed JSON body;
// `/kv`   — the same plus one KV read of a JSON record, like an access-token lookup;
// `/do`   — the same as `/kv` plus one RPC call to an empty method of a SQLite-backed Durable
//           Object, like a read that one object answers (an access-request list).
// `POST /rotate?chain=<n>` — the floor of a refresh-token rotation: one RPC call to the object of
//           the chain (one per connection, as the bench's refresh chains each have their user's
//           object), which inserts one row and updates another in one transaction and writes two KV
//           records side by side (a new key and the previous one overwritten), as a rotation
//           writes the new access token and the old one's tombstone.
// `POST /put` — one KV write of a new key from the Worker: what one such write costs here.
// `/page`  — the same as `/do`, but the object reads a page of 20 rows (an access request's
//           columns, oldest first) and the Worker answers them with Knock's presenter:
//           the floor of a list page, with nothing else of Knock's (no token hash, middleware,
//           policy, pagination headers).
import { DurableObject } from 'cloudflare:workers';
import { Hono } from 'hono';
import { presentAccessRequest } from '../../worker/api/presenters/member';
import type { AccessRequestRow } from '../../worker/durable/namespace/types';

interface Env {
  BASELINE_KV: KVNamespace;
  BASELINE_DO: DurableObjectNamespace<BaselineObject>;
}

const BASELINE_KEY = 'at:baseline';

const body = { id: 1, username: 'bench', name: 'Bench User', state: 'active' };

/** `ping` does nothing: the cost of the call alone. `rotate` is `POST /rotate`'s floor of a rotation; `page` reads 20 rows. */
export class BaselineObject extends DurableObject<Env> {
  private next = 0;
  private seeded = false;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    const sql = ctx.storage.sql;
    sql.exec('CREATE TABLE IF NOT EXISTS rows (id INTEGER PRIMARY KEY, state TEXT NOT NULL)');
  }

  /** The 1,000 rows `page` reads from, made on its first call (the rotation chains' objects never hold them). */
  private seed(): void {
    if (this.seeded) return;
    this.seeded = true;
    const sql = this.ctx.storage.sql;
    sql.exec(`CREATE TABLE IF NOT EXISTS requests (seq INTEGER PRIMARY KEY AUTOINCREMENT, user_id INTEGER NOT NULL UNIQUE, requested_at TEXT NOT NULL,
      username TEXT NOT NULL, name TEXT NOT NULL, reason TEXT, access_level INTEGER, expires_at TEXT, approvals_required INTEGER NOT NULL DEFAULT 1,
      max_duration_hours INTEGER, pending_until TEXT)`);
    if (sql.exec<{ n: number }>('SELECT COUNT(*) AS n FROM requests').one().n === 0) {
      for (let i = 1; i <= 1000; i++) sql.exec('INSERT INTO requests (user_id, requested_at, username, name) VALUES (?, ?, ?, ?)', 1000 + i, new Date(1.7e12 + i * 1000).toISOString(), `user${i}`, `User ${i}`);
    }
  }

  ping(): null {
    return null;
  }

  async rotate(): Promise<{ n: number }> {
    const n = ++this.next;
    this.ctx.storage.transactionSync(() => {
      this.ctx.storage.sql.exec("UPDATE rows SET state = 'rotated' WHERE id = ?", n - 1);
      this.ctx.storage.sql.exec("INSERT OR REPLACE INTO rows (id, state) VALUES (?, 'active')", n);
    });
    const expiration = Math.floor(Date.now() / 1000) + 3600;
    const key = (k: number) => `rotate:${this.ctx.id}:${k}`;
    await Promise.all([
      this.env.BASELINE_KV.put(key(n), JSON.stringify(body), { expiration }),
      this.env.BASELINE_KV.put(key(n - 1), JSON.stringify({ revoked: true }), { expiration }),
    ]);
    return { n };
  }

  page(): AccessRequestRow[] {
    this.seed();
    return this.ctx.storage.sql
      .exec<AccessRequestRow>(
        `SELECT user_id, requested_at, username, name, reason, access_level, expires_at, approvals_required, max_duration_hours, pending_until, '[]' AS approvals
         FROM requests ORDER BY seq LIMIT 20`,
      )
      .toArray();
  }
}

const app = new Hono<{ Bindings: Env }>();

app.get('/json', (c) => c.json(body));

const tokenRecord = (env: Env) => env.BASELINE_KV.get<{ userId: number }>(BASELINE_KEY, 'json');

app.get('/kv', async (c) => {
  if (!(await tokenRecord(c.env))) return c.json({ message: '401 Unauthorized' }, 401);
  return c.json(body);
});

app.get('/do', async (c) => {
  if (!(await tokenRecord(c.env))) return c.json({ message: '401 Unauthorized' }, 401);
  await c.env.BASELINE_DO.getByName('baseline').ping();
  return c.json(body);
});

let puts = 0;
app.post('/put', async (c) => {
  await c.env.BASELINE_KV.put(`put:${++puts}`, JSON.stringify(body), { expiration: Math.floor(Date.now() / 1000) + 3600 });
  return c.json(body);
});

app.post('/rotate', async (c) => c.json(await c.env.BASELINE_DO.getByName(`chain:${c.req.query('chain') ?? 0}`).rotate()));

app.get('/page', async (c) => {
  if (!(await tokenRecord(c.env))) return c.json({ message: '401 Unauthorized' }, 401);
  const rows = await c.env.BASELINE_DO.getByName('baseline').page();
  return c.json(rows.map((r) => presentAccessRequest(r, { id: r.user_id, username: r.username, name: r.name, state: 'active' }, 'http://127.0.0.1')));
});

export default app;
