// The floors the Worker is measured against, in the same runtime and process:
// `/json` — a minimal Hono Worker answering a fixed JSON body;
// `/kv`   — the same plus one KV read of a JSON record, like an access-token lookup.
import { Hono } from 'hono';

interface Env {
  BASELINE_KV: KVNamespace;
}

const BASELINE_KEY = 'at:baseline';

const body = { id: 1, username: 'bench', name: 'Bench User', state: 'active' };

const app = new Hono<{ Bindings: Env }>();

app.get('/json', (c) => c.json(body));

app.get('/kv', async (c) => {
  const record = await c.env.BASELINE_KV.get<{ userId: number }>(BASELINE_KEY, 'json');
  if (!record) return c.json({ message: '401 Unauthorized' }, 401);
  return c.json(body);
});

export default app;
