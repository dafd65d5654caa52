// One Miniflare (one workerd process) running Knock, the baselines, the peer, and two bench-only
// Workers that share Knock's state (the seeder, and the round-trip counter), each on its own
// socket on 127.0.0.1, with fresh state that is thrown away afterwards.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Miniflare, convertV4MiniflareOptions, Log, LogLevel } from 'miniflare';
import { ROOT } from './paths.mjs';

export const COMPATIBILITY_DATE = '2026-08-01';
const compat = { compatibilityDate: COMPATIBILITY_DATE, compatibilityFlags: ['nodejs_compat'] };
const socket = (name) => ({ unsafeDirectSockets: [{ host: '127.0.0.1', port: 0 }], name });
const script = (path) => ({ modules: true, scriptPath: path, modulesRoot: dirname(path) });

/** A fresh state directory, on tmpfs where there is one: local KV and SQLite on a disk would measure the disk. */
export const freshStateDir = () => mkdtempSync(join(existsSync('/dev/shm') ? '/dev/shm' : tmpdir(), 'knock-bench-state-'));

/** Knock's Durable Object bindings as wrangler.toml declares them: `{ DIRECTORY: 'Directory', … }`. */
export const durableObjectClasses = () => {
  const toml = readFileSync(join(ROOT, 'wrangler.toml'), 'utf8');
  const classes = {};
  for (const block of toml.split(/^\[\[durable_objects\.bindings\]\]\s*$/m).slice(1)) {
    const name = /^name\s*=\s*"([^"]+)"/m.exec(block)?.[1];
    const cls = /^class_name\s*=\s*"([^"]+)"/m.exec(block)?.[1];
    if (name && cls) classes[name] = cls;
  }
  return classes;
};

const durableObjectsOf = (classes) => Object.fromEntries(Object.entries(classes).map(([binding, className]) => [binding, { className, useSQLite: true }]));

/** Knock's variables and secrets in the bench (wrangler.toml's `[vars]`, fresh secrets). */
const knockVars = (adminToken, tokenHashKey) => ({
  ADMIN_TOKEN: adminToken,
  TOKEN_HASH_KEY: tokenHashKey,
  ACCESS_TOKEN_TTL_SECONDS: '28800',
  CODE_TTL_SECONDS: '600',
  REFRESH_TOKEN_TTL_SECONDS: '2592000',
  SIGNUP_ENABLED: 'true',
  EXTENSION_REDIRECT_URIS: 'https://odhclnlgfnipbpcdeojbgcidnleblgjk.chromiumapp.org/',
  // The webhook receiver is the bench process, on 127.0.0.1.
  ALLOW_LOCAL_WEBHOOKS: 'true',
  // The bench's sign-ins come from their own addresses, as the edge would say (partitions.mjs).
  CLIENT_ADDRESS_HEADER: 'CF-Connecting-IP',
});

const newSecrets = () => ({ adminToken: `bench_admin_${randomBytes(18).toString('base64url')}`, tokenHashKey: randomBytes(32).toString('base64url') });

/** Knock's Worker: its bundle, its Durable Objects, its KV namespace. */
const knockWorker = (knock, durableObjects, bindings) => ({
  ...socket('knock'),
  ...compat,
  ...script(knock),
  durableObjects,
  kvNamespaces: { TOKENS: 'knock-tokens' },
  bindings,
});

/** Knock's Durable Objects as another Worker binds them (the same objects, by script name). */
const sharedWith = (durableObjects) => Object.fromEntries(Object.entries(durableObjects).map(([k, v]) => [k, { ...v, scriptName: 'knock' }]));

/** One Miniflare running `workers`, and the address of each. */
const start = async (workers, { persistTo, inspectorPort }) => {
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

export async function startRuntime({ knock, baseline, peer, seeder, counter, persistTo, inspectorPort }) {
  const { adminToken, tokenHashKey } = newSecrets();
  const durableObjects = durableObjectsOf(durableObjectClasses());
  const knockBindings = knockVars(adminToken, tokenHashKey);
  // Workers that share Knock's state: its Durable Objects (by script name) and KV namespace.
  const sharedDurableObjects = sharedWith(durableObjects);
  const { mf, urls } = await start(
    [
      knockWorker(knock, durableObjects, knockBindings),
      { ...socket('baseline'), ...compat, ...script(baseline), kvNamespaces: { BASELINE_KV: 'baseline-kv' } },
      {
        ...socket('peer'),
        ...compat,
        // The library warns at start-up unless outbound fetches are strictly public.
        compatibilityFlags: [...compat.compatibilityFlags, 'global_fetch_strictly_public'],
        ...script(peer),
        kvNamespaces: { OAUTH_KV: 'peer-oauth-kv' },
      },
      { ...socket('seeder'), ...compat, ...script(seeder), kvNamespaces: { TOKENS: 'knock-tokens' }, durableObjects: sharedDurableObjects, bindings: { TOKEN_HASH_KEY: tokenHashKey } },
      { ...socket('counter'), ...compat, ...script(counter), kvNamespaces: { TOKENS: 'knock-tokens' }, durableObjects: sharedDurableObjects, bindings: knockBindings },
    ],
    { persistTo, inspectorPort },
  );
  return { mf, urls, adminToken, dispose: () => mf.dispose() };
}

/**
 * Knock alone (`knock`: the production bundle, or bench/counted's build counting every object
 * call) with the seeder bound to its objects and KV (and to a BenchEcho object of its own), for the
 * partitions scenarios. `secrets` keeps the admin token and hash key of a state across restarts.
 */
export async function startKnockRuntime({ knock, seeder, persistTo, counted = false, secrets = newSecrets() }) {
  const classes = durableObjectClasses();
  const durableObjects = durableObjectsOf(classes);
  const vars = knockVars(secrets.adminToken, secrets.tokenHashKey);
  const { mf, urls } = await start(
    [
      knockWorker(knock, durableObjects, counted ? { ...vars, BENCH_CLASSES: JSON.stringify(classes) } : vars),
      {
        ...socket('seeder'),
        ...compat,
        ...script(seeder),
        kvNamespaces: { TOKENS: 'knock-tokens' },
        durableObjects: { ...sharedWith(durableObjects), ECHO: { className: 'BenchEcho', useSQLite: true } },
        bindings: { TOKEN_HASH_KEY: secrets.tokenHashKey },
      },
    ],
    { persistTo },
  );
  return { mf, urls, adminToken: secrets.adminToken, secrets, dispose: () => mf.dispose() };
}
