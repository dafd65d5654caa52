// One Miniflare (one workerd process) running Knock, the baselines, the peer, and two bench-only
// Workers that share Knock's state (the seeder, and the round-trip counter), each on its own
// socket on 127.0.0.1, with fresh state that is thrown away afterwards.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Miniflare, convertV4MiniflareOptions, Log, LogLevel } from 'miniflare';

export const COMPATIBILITY_DATE = '2026-08-01';
const compat = { compatibilityDate: COMPATIBILITY_DATE, compatibilityFlags: ['nodejs_compat'] };
const socket = (name) => ({ unsafeDirectSockets: [{ host: '127.0.0.1', port: 0 }], name });
const script = (path) => ({ modules: true, scriptPath: path, modulesRoot: dirname(path) });

/** A fresh state directory, on tmpfs where there is one: local KV and SQLite on a disk would measure the disk. */
export const freshStateDir = () => mkdtempSync(join(existsSync('/dev/shm') ? '/dev/shm' : tmpdir(), 'knock-bench-state-'));

export async function startRuntime({ knock, baseline, peer, seeder, counter, persistTo, inspectorPort }) {
  const adminToken = `bench_admin_${randomBytes(18).toString('base64url')}`;
  const tokenHashKey = randomBytes(32).toString('base64url');
  const durableObjects = {
    DIRECTORY: { className: 'Directory', useSQLite: true },
    GRANTS: { className: 'Grants', useSQLite: true },
    NAMESPACES: { className: 'Namespace', useSQLite: true },
    CLIENT_HOLDERS: { className: 'ClientHolders', useSQLite: true },
    AUDIT_LOG: { className: 'AuditLog', useSQLite: true },
  };
  const knockBindings = {
    ADMIN_TOKEN: adminToken,
    TOKEN_HASH_KEY: tokenHashKey,
    ACCESS_TOKEN_TTL_SECONDS: '28800',
    CODE_TTL_SECONDS: '600',
    REFRESH_TOKEN_TTL_SECONDS: '2592000',
    SIGNUP_ENABLED: 'true',
    EXTENSION_REDIRECT_URIS: 'https://odhclnlgfnipbpcdeojbgcidnleblgjk.chromiumapp.org/',
    // The webhook receiver is the bench process, on 127.0.0.1.
    ALLOW_LOCAL_WEBHOOKS: 'true',
  };
  // Workers that share Knock's state: its Durable Objects (by script name) and KV namespace.
  const sharedDurableObjects = Object.fromEntries(Object.entries(durableObjects).map(([k, v]) => [k, { ...v, scriptName: 'knock' }]));
  const mf = new Miniflare(
    convertV4MiniflareOptions({
      host: '127.0.0.1',
      port: 0,
      cf: false,
      ...(inspectorPort ? { inspectorPort } : {}),
      resourcePersistencePath: persistTo,
      log: new Log(LogLevel.WARN),
      workers: [
        {
          ...socket('knock'),
          ...compat,
          ...script(knock),
          durableObjects,
          kvNamespaces: { TOKENS: 'knock-tokens' },
          bindings: knockBindings,
        },
        { ...socket('baseline'), ...compat, ...script(baseline), kvNamespaces: { BASELINE_KV: 'baseline-kv' } },
        {
          ...socket('peer'),
          ...compat,
          // The library warns at start-up unless outbound fetches are strictly public.
          compatibilityFlags: [...compat.compatibilityFlags, 'global_fetch_strictly_public'],
          ...script(peer),
          kvNamespaces: { OAUTH_KV: 'peer-oauth-kv' },
        },
        {
          ...socket('seeder'),
          ...compat,
          ...script(seeder),
          kvNamespaces: { TOKENS: 'knock-tokens' },
          durableObjects: sharedDurableObjects,
          bindings: { TOKEN_HASH_KEY: tokenHashKey },
        },
        {
          ...socket('counter'),
          ...compat,
          ...script(counter),
          kvNamespaces: { TOKENS: 'knock-tokens' },
          durableObjects: sharedDurableObjects,
          bindings: knockBindings,
        },
      ],
    }),
  );
  await mf.ready;
  const urls = {};
  for (const name of ['knock', 'baseline', 'peer', 'seeder', 'counter']) urls[name] = (await mf.unsafeGetDirectURL(name)).origin;
  return { mf, urls, adminToken, dispose: () => mf.dispose() };
}
