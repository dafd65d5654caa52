// One Miniflare (one workerd process) running Knock, the baselines, the peer, and two bench-only
// Workers that share Knock's state (the seeder, and the round-trip counter), each on its own
// socket on 127.0.0.1, with fresh state that is thrown away afterwards. Knock's Worker (its
// compatibility date and flags, variables, Durable Objects and KV namespace) is what wrangler's own
// config reader makes of wrangler.toml: there is no second list of its bindings here.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Miniflare, convertV4MiniflareOptions, Log, LogLevel } from 'miniflare';
import { unstable_getMiniflareWorkerOptions } from 'wrangler';
import { ROOT } from './paths.mjs';

/**
 * Knock's Worker as `wrangler dev` would run it, from wrangler.toml (and `.dev.vars`, whose
 * secrets the callers replace): `compat`, `vars`, `durableObjects`, `kvNamespaces`.
 */
export const knockConfig = () => {
  const level = process.env.WRANGLER_LOG;
  // The secrets wrangler.toml requires are given to Miniflare below, not read from the environment.
  process.env.WRANGLER_LOG = 'error';
  try {
    const { workerOptions: w } = unstable_getMiniflareWorkerOptions(join(ROOT, 'wrangler.toml'));
    return {
      compat: { compatibilityDate: w.compatibilityDate, compatibilityFlags: w.compatibilityFlags ?? [] },
      vars: w.bindings ?? {},
      durableObjects: w.durableObjects ?? {},
      kvNamespaces: w.kvNamespaces ?? {},
    };
  } finally {
    if (level === undefined) delete process.env.WRANGLER_LOG;
    else process.env.WRANGLER_LOG = level;
  }
};

export const socket = (name) => ({ unsafeDirectSockets: [{ host: '127.0.0.1', port: 0 }], name });
export const script = (path) => ({ modules: true, scriptPath: path, modulesRoot: dirname(path) });

/** A fresh state directory, on tmpfs where there is one: local KV and SQLite on a disk would measure the disk. */
export const freshStateDir = () => mkdtempSync(join(existsSync('/dev/shm') ? '/dev/shm' : tmpdir(), 'knock-bench-state-'));

/** Knock's Durable Object bindings as wrangler.toml declares them: `{ DIRECTORY: 'Directory', … }`. */
export const durableObjectClasses = (config = knockConfig()) =>
  Object.fromEntries(Object.entries(config.durableObjects).map(([binding, { className }]) => [binding, className]));

/** Knock's variables (wrangler.toml's `[vars]`) with fresh secrets; webhooks may go to the bench process on 127.0.0.1. */
const knockVars = (config, { adminToken, tokenHashKey }) => ({
  ...config.vars,
  ADMIN_TOKEN: adminToken,
  TOKEN_HASH_KEY: tokenHashKey,
  ALLOW_LOCAL_WEBHOOKS: 'true',
  // The bench's sign-ins come from their own addresses, as the edge would say (partitions.mjs).
  CLIENT_ADDRESS_HEADER: 'CF-Connecting-IP',
});

export const newSecrets = () => ({ adminToken: `bench_admin_${randomBytes(18).toString('base64url')}`, tokenHashKey: randomBytes(32).toString('base64url') });

/** Knock's Worker: its bundle, its Durable Objects, its KV namespace. */
const knockWorker = (knock, config, bindings) => ({
  ...socket('knock'),
  ...config.compat,
  ...script(knock),
  durableObjects: config.durableObjects,
  kvNamespaces: config.kvNamespaces,
  bindings,
});

/** Knock's Durable Objects as another Worker binds them (the same objects, by script name). */
const sharedWith = (durableObjects) => Object.fromEntries(Object.entries(durableObjects).map(([k, v]) => [k, { ...v, scriptName: 'knock' }]));

/** One Miniflare running `workers`, and the address of each. */
export const start = async (workers, { persistTo, inspectorPort }) => {
  const mf = new Miniflare(
    convertV4MiniflareOptions({
      host: '127.0.0.1',
      port: 0,
      cf: false,
      ...(inspectorPort ? { inspectorPort } : {}),
      resourcePersistencePath: persistTo,
      log: new Log(LogLevel.WARN),
      workers,
    }),
  );
  await mf.ready;
  const urls = {};
  for (const { name } of workers) urls[name] = (await mf.unsafeGetDirectURL(name)).origin;
  return { mf, urls };
};

/** The token record the baselines' `/kv` and `/do` read (bench/baselines/worker.ts). */
export const seedBaselineToken = async (mf) =>
  (await mf.getKVNamespace('BASELINE_KV', 'baseline')).put('at:baseline', JSON.stringify({ userId: 1, username: 'bench', name: 'Bench User', scopes: ['api'], expiresAt: 4102444800 }));

export async function startRuntime({ knock, baseline, peer, seeder, counter, persistTo, inspectorPort }) {
  const config = knockConfig();
  const secrets = newSecrets();
  const knockBindings = knockVars(config, secrets);
  // Workers that share Knock's state: its Durable Objects (by script name) and KV namespace.
  const shared = { kvNamespaces: config.kvNamespaces, durableObjects: sharedWith(config.durableObjects) };
  const { mf, urls } = await start(
    [
      knockWorker(knock, config, knockBindings),
      {
        ...socket('baseline'),
        ...config.compat,
        ...script(baseline),
        kvNamespaces: { BASELINE_KV: 'baseline-kv' },
        durableObjects: { BASELINE_DO: { className: 'BaselineObject', useSQLite: true } },
      },
      {
        ...socket('peer'),
        ...config.compat,
        // The library warns at start-up unless outbound fetches are strictly public.
        compatibilityFlags: [...config.compat.compatibilityFlags, 'global_fetch_strictly_public'],
        ...script(peer),
        kvNamespaces: { OAUTH_KV: 'peer-oauth-kv' },
      },
      { ...socket('seeder'), ...config.compat, ...script(seeder), ...shared, bindings: { TOKEN_HASH_KEY: secrets.tokenHashKey } },
      { ...socket('counter'), ...config.compat, ...script(counter), ...shared, bindings: { ...knockBindings, BENCH_CLASSES: JSON.stringify(durableObjectClasses(config)) } },
    ],
    { persistTo, inspectorPort },
  );
  return { mf, urls, adminToken: secrets.adminToken, dispose: () => mf.dispose() };
}

/**
 * Knock alone (`knock`: the production bundle, or bench/counted's build counting every object
 * call), with the seeder bound to its objects and KV (and to a BenchEcho object of its own) when
 * `seeder` is given, as the partitions scenarios use it. `secrets` keeps the admin token and hash
 * key of a state across restarts.
 */
export async function startKnockRuntime({ knock, seeder, persistTo, counted = false, secrets = newSecrets() }) {
  const config = knockConfig();
  const vars = knockVars(config, secrets);
  const { mf, urls } = await start(
    [
      knockWorker(knock, config, counted ? { ...vars, BENCH_CLASSES: JSON.stringify(durableObjectClasses(config)) } : vars),
      ...(seeder
        ? [
            {
              ...socket('seeder'),
              ...config.compat,
              ...script(seeder),
              kvNamespaces: config.kvNamespaces,
              durableObjects: { ...sharedWith(config.durableObjects), ECHO: { className: 'BenchEcho', useSQLite: true } },
              bindings: { TOKEN_HASH_KEY: secrets.tokenHashKey },
            },
          ]
        : []),
    ],
    { persistTo },
  );
  return { mf, urls, adminToken: secrets.adminToken, secrets, dispose: () => mf.dispose() };
}
