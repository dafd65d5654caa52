// Knock's Worker with one more route, for bench/loop.mjs only (never deployed): `POST /__loop`
// answers `{ target, headers, n }` by handing Knock's own `fetch` n requests to `target`, one after
// another in this isolate, with the token store's KV answered from memory (each key read once from
// the real namespace). What the process spends meanwhile is Knock's own work per request: its
// middleware, token hash, scopes, routing and presenter, without HTTP or the local KV's storage.
import knock from '../../worker/index';
import type { Env } from '../../worker/env';

export * from '../../worker/index';

/** The token store's namespace answering reads from memory, each key read once from `kv`. */
const memoryKv = (kv: KVNamespace): Pick<KVNamespace, 'get'> => {
  const texts = new Map<string, string | null>();
  const get = async (key: string, type?: unknown): Promise<unknown> => {
    if (!texts.has(key)) texts.set(key, await kv.get(key));
    const text = texts.get(key) ?? null;
    return text !== null && type === 'json' ? JSON.parse(text) : text;
  };
  return { get } as Pick<KVNamespace, 'get'>;
};

interface Loop {
  target: string;
  headers: Record<string, string>;
  n: number;
}

export default {
  async fetch(request: Request, env: Env, ctx: ExecutionContext): Promise<Response> {
    if (new URL(request.url).pathname !== '/__loop') return knock.fetch(request, env, ctx);
    const { target, headers, n } = await request.json<Loop>();
    const loopEnv = { ...env, TOKENS: memoryKv(env.TOKENS) } as Env;
    const statuses: Record<number, number> = {};
    for (let i = 0; i < n; i++) {
      const res = await knock.fetch(new Request(target, { headers }), loopEnv, ctx);
      await res.arrayBuffer();
      statuses[res.status] = (statuses[res.status] ?? 0) + 1;
    }
    return Response.json(statuses);
  },
};
