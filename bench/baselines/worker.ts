// The floors the Worker is measured against, in the same runtime and process:
// `/json` — a minimal Hono Worker answering a fixed JSON body;
// `/kv`   — the same plus one KV read of a JSON record, like an access-token lookup;
// `/do`   — the same as `/kv` plus one RPC call to an empty method of a SQLite-backed Durable
//           Object, like a read that one object answers (an access-request list).
import { DurableObject } from 'cloudflare:workers';
import { Hono } from 'hono';

interface Env {
  BASELINE_KV: KVNamespace;
  BASELINE_DO: DurableObjectNamespace<BaselineObject>;
}

const BASELINE_KEY = 'at:baseline';

const body = { id: 1, username: 'bench', name: 'Bench User', state: 'active' };

/** A Durable Object whose method does nothing: the cost of the call alone. */
export class BaselineObject extends DurableObject<Env> {
  ping(): null {
    return null;
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

export default app;
