// Two versions of Knock side by side (bench/ab.mjs, bench/cpu.mjs): a revision unpacked beside the
// working tree, each version on a runtime of its own, and the refresh chains they drive (Knock's and the peer's).
import { execFileSync } from 'node:child_process';
import { mkdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { buildBenchWorker, buildKnock } from './build.mjs';
import { refreshChains } from './chains.mjs';
import { CONNECTIONS } from './load.mjs';
import { ROOT } from './paths.mjs';
import { startRuntime } from './runtime.mjs';
import * as setup from './setup.mjs';

/** The repository at `rev`, unpacked into `dir` beside the working tree's node_modules. */
export function checkoutRevision(rev, dir) {
  mkdirSync(dir);
  execFileSync('sh', ['-c', `git -C "${ROOT}" archive "${rev}" | tar -x -C "${dir}"`]);
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
  return dir;
}

/** A runtime of Knock built from `root` (named `name` in `work`), with the bench's Workers beside it, on state in `persistTo`. */
export async function startVersion(work, name, root, persistTo) {
  const build = (dir) => buildBenchWorker(`bench/${dir}/worker.ts`, join(work, `${name}-${dir}.mjs`));
  return startRuntime({
    knock: await buildKnock(join(work, `${name}-knock`), root),
    baseline: await build('baselines'),
    peer: await build('peer'),
    seeder: await build('seeder'),
    counter: await build('counter'),
    persistTo,
  });
}

/** One refresh chain per connection, as the bench drives them: a user each, signed in once. */
export async function knockRefreshChains({ urls, adminToken }) {
  const app = await setup.createApplication(urls.knock, adminToken);
  const users = await setup.inPool(Array.from({ length: CONNECTIONS }, (_, i) => `chain${i}`), 4, (u) => setup.signedInUser(urls.knock, adminToken, app, u));
  const grants = await Promise.all(users.map((u) => setup.exchange(urls.knock, '/login/oauth/access_token', app, u.firstCode)));
  return refreshChains(`${urls.knock}/login/oauth/access_token`, app, grants.map((g) => g.refresh_token));
}

/** The peer's refresh chains, one per connection. */
export async function peerRefreshChains({ urls }) {
  const app = await setup.registerPeerClient(urls.peer);
  const grants = await Promise.all(
    Array.from({ length: CONNECTIONS }, async (_, i) => setup.exchange(urls.peer, '/token', app, await setup.peerCode(urls.peer, app, `chain${i}`))),
  );
  return refreshChains(`${urls.peer}/token`, app, grants.map((g) => g.refresh_token));
}
