// The floors the Worker is measured against, in the same runtime and process:
// `/json` — a minimal Hono Worker answering a fixed JSON body;
// `/kv`   — the same plus one KV read of a JSON record, like an access-token lookup;
// `/do`   — the same as `/kv` plus one RPC call to an empty method of a SQLite-backed Durable
//           Object, like a read that one object answers (an access-request list).
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

/** A Durable Object whose `ping` does nothing (the cost of the call alone) and whose `page` reads 20 rows. */
export class BaselineObject extends DurableObject<Env> {
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    const sql = ctx.storage.sql;
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

  page(): AccessRequestRow[] {
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

app.get('/page', async (c) => {
  if (!(await tokenRecord(c.env))) return c.json({ message: '401 Unauthorized' }, 401);
  const rows = await c.env.BASELINE_DO.getByName('baseline').page();
  return c.json(rows.map((r) => presentAccessRequest(r, { id: r.user_id, username: r.username, name: r.name, state: 'active' }, 'http://127.0.0.1')));
});

export default app;
