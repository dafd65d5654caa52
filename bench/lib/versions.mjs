// Two versions of Knock side by side (bench/ab.mjs, bench/cpu.mjs, bench/loop.mjs): a revision unpacked beside the
// working tree, each version on a runtime of its own, and the refresh chains they drive (Knock's and the peer's).
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildBenchWorker, buildKnock } from './build.mjs';
import { refreshChains } from './chains.mjs';
import { CONNECTIONS } from './load.mjs';
import { ROOT } from './paths.mjs';
import { workerdChildren } from './proc.mjs';
import { freshStateDir, startRuntime } from './runtime.mjs';
import * as setup from './setup.mjs';

/** The repository at `rev`, unpacked into `dir` beside the working tree's node_modules. */
function checkoutRevision(rev, dir) {
  mkdirSync(dir);
  execFileSync('sh', ['-c', `git -C "${ROOT}" archive "${rev}" | tar -x -C "${dir}"`]);
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
  return dir;
}

/**
 * A runtime of Knock built from `root` (named `name` in `work`), with the bench's Workers beside
 * it, on state in `persistTo`; `entry`: Knock's module, when not wrangler.toml's `main`.
 */
async function startVersion(work, name, root, persistTo, entry) {
  const build = (dir) => buildBenchWorker(`bench/${dir}/worker.ts`, join(work, `${name}-${dir}.mjs`));
  return startRuntime({
    knock: await buildKnock(join(work, `${name}-knock`), root, entry),
    baseline: await build('baselines'),
    peer: await build('peer'),
    seeder: await build('seeder'),
    counter: await build('counter'),
    persistTo,
  });
}

/**
 * Knock at `rev` (`before`, unpacked) beside the working tree: `start` runs one version on a
 * runtime of its own, on fresh state, and finds its workerd's process id (for /proc); `close`
 * stops every runtime and removes their files. `label` names the temporary folder.
 */
export function versionsAt(rev, label) {
  const work = mkdtempSync(join(tmpdir(), `knock-${label}-`));
  const states = [];
  const runtimes = [];
  return {
    before: () => checkoutRevision(rev, join(work, 'before')),
    async start(name, root, entry) {
      const state = freshStateDir();
      states.push(state);
      const running = workerdChildren();
      const runtime = await startVersion(work, name, root, state, entry);
      runtimes.push(runtime);
      return { runtime, pid: [...workerdChildren()].find((p) => !running.has(p)) };
    },
    async close() {
      for (const runtime of runtimes) await runtime.dispose().catch(() => {});
      rmSync(work, { recursive: true, force: true });
      for (const state of states) rmSync(state, { recursive: true, force: true });
    },
  };
}

/** One refresh chain per connection, as the bench drives them: a user each, signed in once. */
export async function knockRefreshChains({ urls, adminToken }) {
  const app = await setup.createApplication(urls.knock, adminToken);
  const users = await setup.inPool(Array.from({ length: CONNECTIONS }, (_, i) => `chain${i}`), 4, (u) => setup.signedInUser(urls.knock, adminToken, app, u));
  const grants = await Promise.all(users.map((u) => setup.exchange(urls.knock, '/login/oauth/access_token', app, u.firstCode)));
  return refreshChains(`${urls.knock}/login/oauth/access_token`, app, grants.map((g) => g.refresh_token));
}

/**
 * An owner's project with `pending` access requests, and the autocannon targets of the calls the
 * owner's token makes: `GET /api/v4/user`, the project's list (a page of 20) and the inbox poll
 * answered 304 (its ETag read once).
 */
export async function knockOwnerTargets({ urls, adminToken }, prefix, pending) {
  // The owner's OAuth access token, as the extension polls with.
  const owner = await setup.oauthUser(urls.knock, adminToken, await setup.createApplication(urls.knock, adminToken), `${prefix}owner`);
  const requesters = await setup.seedUsers(urls.seeder, prefix, 0, pending);
  const headers = { authorization: `Bearer ${owner.token}` };
  const project = await setup.createProject(urls.knock, owner.token, prefix);
  for (let i = 0; i < requesters.length; i += 1000) await setup.seedAccessRequests(urls.seeder, project, owner.id, requesters.slice(i, i + 1000).map((u) => u.id));
  const first = await fetch(`${urls.knock}/api/v4/access_requests`, { headers });
  await first.arrayBuffer();
  const etag = first.headers.get('etag');
  return {
    user: { url: `${urls.knock}/api/v4/user`, headers },
    list: { url: `${urls.knock}/api/v4/projects/${project}/access_requests?per_page=20`, headers },
    304: { url: `${urls.knock}/api/v4/access_requests`, headers: { ...headers, 'if-none-match': etag } },
  };
}

/** The peer's refresh chains, one per connection. */
export async function peerRefreshChains({ urls }) {
  const app = await setup.registerPeerClient(urls.peer);
  const grants = await Promise.all(
    Array.from({ length: CONNECTIONS }, async (_, i) => setup.exchange(urls.peer, '/token', app, await setup.peerCode(urls.peer, app, `chain${i}`))),
  );
  return refreshChains(`${urls.peer}/token`, app, grants.map((g) => g.refresh_token));
}
