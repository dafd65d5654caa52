// Bench-only: Knock's app with its storage bindings wrapped to count round trips, bound to the
// same Durable Objects and KV namespace as the measured Worker (so it sees the same state). The
// bench sends one request of each scenario here and reports `KV n, DO n` per request.
//
// Every Durable Object binding is wrapped, found by shape (recording-bindings.ts) and named by its
// class from `BENCH_CLASSES` (wrangler.toml's bindings, bench/lib/runtime.mjs), so a binding
// added there is counted without a change here.
import { app } from '../../worker/app';
import type { Env } from '../../worker/env';
import { recordingBindings } from '../../test/worker/support/recording-bindings';

type Counts = { kv: string[]; do: string[] };

const countKv = (kv: KVNamespace, counts: Counts): KVNamespace =>
  new Proxy(kv, {
    get(target, prop) {
      const value = Reflect.get(target, prop);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        counts.kv.push(String(prop));
        return Reflect.apply(value, target, args);
      };
    },
  });

export default {
  async fetch(request: Request, env: Env, ctx: ExecutionContext): Promise<Response> {
    const counts: Counts = { kv: [], do: [] };
    const classes = JSON.parse(Reflect.get(env, 'BENCH_CLASSES') as string) as Record<string, string>;
    const counted = recordingBindings(
      { ...env, TOKENS: countKv(env.TOKENS, counts) },
      (binding) => classes[binding] ?? binding,
      (cls, _name, method) => counts.do.push(`${cls}.${method}`),
    );
    const response = await app.fetch(request, counted, ctx);
    const headers = new Headers(response.headers);
    headers.set('x-bench-round-trips', JSON.stringify(counts));
    return new Response(response.body, { status: response.status, headers });
  },
};
