/**
 * What the unit project gives for `cloudflare:workers` (aliased in test/unit/vitest.config.ts): the
 * Durable Object base class, which in workerd keeps the object's state and bindings as `ctx` and
 * `env` and nothing else. An object made on it in Node gets its storage from ./sql-storage.ts and
 * its bindings from ./durable-objects.ts; its methods are called directly, not over RPC.
 */
export class DurableObject<Env = unknown> {
  constructor(
    protected ctx: DurableObjectState,
    protected env: Env,
  ) {}
}

/** Workers RPC's base class of objects passed by reference (a `User`'s second factor); in Node, a plain object. */
export class RpcTarget {}
