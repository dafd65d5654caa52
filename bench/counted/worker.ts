// Bench only: Knock counted. The same app and Durable Object classes as the product, with every
// Durable Object binding wrapped to record each call by class and object name: the Worker's own
// calls and, through the `env` each object is constructed with, the calls objects (and their
// alarms) make to each other. It runs on state of its own, so the production bundle that the
// latencies are measured on is untouched. `GET /__bench/calls` answers the calls recorded since
// the last `DELETE /__bench/calls`.
//
// Bindings are found by shape (anything with `getByName`), and the bench's build
// (`buildCountedKnock` in bench/lib/build.mjs) exports `counted(product.X)` as `X` for every class
// wrangler.toml binds, so objects added there are counted without a change here.
import { app } from '../../worker/app';
import type { Env } from '../../worker/env';
import { recordingBindings } from '../../test/worker/support/recording-bindings';

/** Calls since the last reset: `Class name` → method → count. */
let calls = new Map<string, Map<string, number>>();

const record = (cls: string, name: string, method: string) => {
  const key = `${cls} ${name}`;
  const methods = calls.get(key) ?? new Map<string, number>();
  methods.set(method, (methods.get(method) ?? 0) + 1);
  calls.set(key, methods);
};

/** `env` with every Durable Object binding wrapped to record the calls made through `getByName`. */
const countedEnv = (env: Env): Env => {
  const classes = JSON.parse(Reflect.get(env, 'BENCH_CLASSES') as string) as Record<string, string>;
  return recordingBindings(env, (binding) => classes[binding] ?? binding, record);
};

/** A product Durable Object class whose `env` counts its calls to other objects. */
// A mixin's constructor must take `...args: any[]` (TypeScript's rule); they are (ctx, env).
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export const counted = <T extends new (...args: any[]) => object>(Base: T) =>
  class extends Base {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    constructor(...args: any[]) {
      super(args[0], countedEnv(args[1] as Env));
    }
  };

export default {
  async fetch(request: Request, env: Env, ctx: ExecutionContext): Promise<Response> {
    if (new URL(request.url).pathname === '/__bench/calls') {
      if (request.method === 'DELETE') calls = new Map();
      return Response.json(Object.fromEntries([...calls].map(([key, methods]) => [key, Object.fromEntries(methods)])));
    }
    return app.fetch(request, countedEnv(env), ctx);
  },
};
