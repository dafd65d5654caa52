// Bench-only Worker that seeds Knock's state quickly, bound to Knock's own Durable Objects and
// KV namespace. It calls only the objects' public methods (the same ones the API routes call) and
// writes tokens with the token store's own functions, so what the bench measures afterwards is
// Knock's unchanged production bundle reading ordinary state.
//
// It also holds what the partitions scenarios (bench/lib/partitions.mjs) need beside Knock: a
// trivial object of its own (`BenchEcho`) to measure one object's ceiling, and the ids of Knock's
// objects by name (to find their SQLite files for bulk seeding).
import { DurableObject } from 'cloudflare:workers';
import type { Directory } from '../../worker/durable/directory/directory';
import type { UserRow } from '../../worker/durable/directory/types';
import type { SignIn } from '../../worker/durable/sign-in/sign-in';
import type { Namespace } from '../../worker/durable/namespace/namespace';
import { snapshotOf } from '../../worker/durable/namespace-registry';
import { partitionOfName } from '../../worker/durable/partitions';
import type { Result } from '../../worker/durable/result';
import { hashSecret, newAccessToken, putAccessToken } from '../../worker/store/tokens';

interface Env {
  TOKENS: KVNamespace;
  DIRECTORY: DurableObjectNamespace<Directory>;
  NAMESPACES: DurableObjectNamespace<Namespace>;
  SIGN_IN: DurableObjectNamespace<SignIn>;
  ECHO: DurableObjectNamespace<BenchEcho>;
  TOKEN_HASH_KEY: string;
}

/** Bench only: the cheapest call an object can answer, for one object's ceiling on this machine. */
export class BenchEcho extends DurableObject {
  ping(n: number): number {
    return n;
  }
}

type SeedUser = { id: number; username: string; name: string; email: string | null; created_at: string };

const value = <T>(result: unknown): T => {
  const r = result as Result<T>;
  if (!r.ok) throw new Error(JSON.stringify(r.problem));
  return r.value;
};

/** Runs `work` over `items` with at most `limit` calls in flight. */
const pool = async <T, R>(items: T[], limit: number, work: (item: T) => Promise<R>): Promise<R[]> => {
  const out: R[] = new Array(items.length);
  let next = 0;
  const lanes = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await work(items[i]);
    }
  });
  await Promise.all(lanes);
  return out;
};

const createUsers = async (env: Env, prefix: string, from: number, count: number): Promise<SeedUser[]> => {
  const dir = env.DIRECTORY.getByName('directory');
  const indexes = Array.from({ length: count }, (_, i) => from + i);
  return pool(indexes, 32, async (i) => {
    const username = `${prefix}${i}`;
    const user = value<SeedUser>(await dir.createUser({ username, name: `Bench ${prefix} ${i}`, passwordHash: null }));
    return { id: user.id, username: user.username, name: user.name, email: user.email, created_at: user.created_at };
  });
};

const mintTokens = async (env: Env, users: SeedUser[], scopes: string[]): Promise<string[]> => {
  const expiresAt = Math.floor(Date.now() / 1000) + 8 * 3600;
  return pool(users, 32, async (u) => {
    const token = newAccessToken(expiresAt);
    await putAccessToken(env as never, await hashSecret(env as never, token), {
      userId: u.id, username: u.username, name: u.name, admin: false, email: u.email, userCreatedAt: u.created_at, twoFactorEnabled: false,
      scopes, clientId: null, grantId: null, tokenId: null, createdAt: Math.floor(Date.now() / 1000), expiresAt,
    });
    return token;
  });
};

const requestAccess = async (env: Env, kind: 'group' | 'project', namespaceId: number, userIds: number[]): Promise<number> => {
  const dir = env.DIRECTORY.getByName('directory');
  const resolved = await dir.resolveNamespace(kind, namespaceId);
  if (!resolved) throw new Error(`no ${kind} ${namespaceId}`);
  const ns = resolved.namespace;
  const ref = { id: ns.id, kind, creatorId: ns.creator_id, createdAt: ns.created_at, snapshot: snapshotOf(ns), byPath: false };
  const object = env.NAMESPACES.getByName(String(ns.id));
  // The requester's name is stored with the request, as the API route does with the caller's.
  const users = await dir.getUsers(userIds);
  await pool(users, 32, async (u) =>
    value(
      await object.requestAccess(ref, { userId: u.id, admin: false, inherited: 0 }, { username: u.username, name: u.name }, { reason: null, accessLevel: null, expiresAt: null, breakGlass: false, email: null }),
    ),
  );
  return users.length;
};

/**
 * Groups or projects owned by `ownerId`, as `POST /groups` and `POST /projects` make them: the
 * registry row (the creator is Owner in the same transaction), then the object's own state.
 * Projects without a parent go in the owner's personal namespace.
 */
const createNamespaces = async (env: Env, kind: 'group' | 'project', ownerId: number, parentId: number | null, paths: string[]): Promise<number[]> => {
  const dir = env.DIRECTORY.getByName('directory');
  let parent = parentId;
  if (parent === null && kind === 'project') {
    const owner = await dir.getUser(ownerId);
    if (!owner) throw new Error(`no user ${ownerId}`);
    parent = value<{ id: number }>(await dir.ensureUserNamespace({ username: owner.username, name: owner.name })).id;
  }
  return pool(paths, 32, async (path) => {
    const row = value<Parameters<typeof snapshotOf>[0]>(
      await dir.createNamespace({ kind, name: path, path, parentId: parent, visibility: 'public', requestAccessEnabled: true, description: '', creatorId: ownerId }),
    );
    const ref = { id: row.id, kind, creatorId: row.creator_id, createdAt: row.created_at, snapshot: snapshotOf(row), byPath: false };
    await env.NAMESPACES.getByName(String(row.id)).initialize(ref);
    return row.id;
  });
};

/** `calls` calls of `call`, `concurrency` in flight: how long they took. */
const timed = async (calls: number, concurrency: number, call: (i: number) => Promise<unknown>) => {
  const started = performance.now();
  await pool(Array.from({ length: calls }, (_, i) => i), concurrency, call);
  return { calls, concurrency, ms: performance.now() - started };
};

/**
 * One object's ceiling: `echo` calls a trivial method of one BenchEcho object; `sign-in` makes
 * what a successful sign-in asks of the username's `SignIn` partition (`beginSignIn`, then
 * `signedIn`, one username per lane, on an object of its own so the measured partitions are
 * untouched). The password check runs in the Worker, not in the object, so it is not part of the
 * object's ceiling; the address's partition is another object, asked at the same time.
 */
const ceiling = async (env: Env, kind: string, calls: number, concurrency: number) => {
  if (kind === 'echo') {
    const echo = env.ECHO.getByName('ceiling');
    await echo.ping(0);
    return timed(calls, concurrency, (i) => echo.ping(i));
  }
  // One username per lane: simultaneous attempts at one account are throttled by design.
  const names = env.SIGN_IN.getByName('bench-ceiling');
  const usernames = Array.from({ length: concurrency }, (_, i) => `ceiling${i}`);
  const user = (id: number, username: string): UserRow => ({
    id,
    username,
    name: 'Ceiling',
    email: null,
    admin: false,
    state: 'active',
    created_at: new Date(0).toISOString(),
    version: 1,
    builtin: false,
    two_factor_enabled: false,
  });
  await names.applyLogins(usernames.map((username, i) => ({ userId: i + 1, version: 1, login: { user: user(i + 1, username), passwordHash: 'pbkdf2-sha256$1$x$y' } })));
  return timed(calls, concurrency, async (i) => {
    const username = usernames[i % concurrency];
    const attempt = await names.beginSignIn(username);
    if ('retryAfter' in attempt || !attempt.login) throw new Error(`the sign-in ceiling user ${username} was refused`);
    await names.signedIn(username);
  });
};

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    const path = new URL(request.url).pathname;
    const input = (await request.json()) as Record<string, never>;
    try {
      if (path === '/users') {
        const users = await createUsers(env, input.prefix, input.from ?? 0, input.count);
        const tokens = input.tokens ? await mintTokens(env, users, input.scopes ?? ['api']) : null;
        return Response.json(users.map((u, i) => ({ ...u, token: tokens?.[i] })));
      }
      if (path === '/tokens') return Response.json(await mintTokens(env, input.users, input.scopes ?? ['api']));
      if (path === '/namespaces') {
        return Response.json(await createNamespaces(env, input.kind, input.ownerId, input.parentId ?? null, input.paths));
      }
      if (path === '/ceiling') return Response.json(await ceiling(env, input.kind, input.calls, input.concurrency));
      if (path === '/partitions-of') {
        // The partition of each name `${prefix}${n}`, from <= n < to: as Knock computes it.
        const { prefix, from, to, count } = input;
        const out = new Uint16Array(to - from);
        for (let n = from; n < to; n++) out[n - from] = partitionOfName(`${prefix}${n}`, count);
        return new Response(out);
      }
      if (path === '/object-id') {
        const binding = Reflect.get(env, input.binding) as DurableObjectNamespace | undefined;
        if (!binding?.idFromName) return new Response(`no Durable Object binding ${input.binding}`, { status: 400 });
        // Any call constructs the object (its constructor creates its tables); an unknown method
        // is refused after that, which is all this needs.
        await (binding.getByName(input.name) as unknown as { benchTouch(): Promise<void> }).benchTouch().catch(() => {});
        return Response.json({ id: binding.idFromName(input.name).toString() });
      }
      if (path === '/access_requests') {
        return Response.json({ created: await requestAccess(env, input.kind, input.namespaceId, input.userIds) });
      }
      return new Response('not found', { status: 404 });
    } catch (e) {
      return new Response(String((e as Error)?.stack ?? e), { status: 500 });
    }
  },
};
