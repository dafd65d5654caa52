// The system project's shared Knock server (its `globalSetup`): one `wrangler dev` on fresh state
// for the whole run, for the files whose point is not a fresh server of their own. They reach it
// through `sharedKnock()` (knock-server.ts) and keep out of each other's way by their names: each
// file makes its own users, groups and projects, and only test/e2e/console.test.ts seeds
// `npm start`'s demo data (alice, bob, carol, acme) there. Files that restart or kill a server, or
// need one of their own (the extension's first server, behind a recording proxy), start theirs.
//
// Webhook retries are a second apart (WEBHOOK_RETRY_SCHEDULE), so that webhooks.test.ts sees a
// hook rest within seconds.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { startKnock } from './knock-server';

export default async function startSharedKnock(project: TestProject): Promise<() => Promise<void>> {
  const state = mkdtempSync(join(tmpdir(), 'knock-system-'));
  const server = await startKnock(state, { WEBHOOK_RETRY_SCHEDULE: '1,1,1,1,1,1,1' });
  project.provide('sharedKnock', { url: server.url, adminToken: server.adminToken });
  return async () => {
    await server.stop();
    rmSync(state, { recursive: true, force: true });
  };
}
