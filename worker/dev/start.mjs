// `npm start`: the Worker on http://127.0.0.1:8787 with local, persisted KV and Durable Object
// state (.wrangler/state). The first run writes .dev.vars with a random admin token and
// token-hashing key; later runs reuse them, and add any that an older or hand-written .dev.vars
// lacks. Demo data is created once.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { completeDevVars, parseDevVars } from './dev-vars.mjs';
import { ROOT, startServer } from './server.mjs';

// KNOCK_DEV_VARS and KNOCK_STATE_DIR let tests run `npm start` without touching your own state.
const DEV_VARS = process.env.KNOCK_DEV_VARS ?? join(ROOT, '.dev.vars');
const STATE_DIR = process.env.KNOCK_STATE_DIR ?? join(ROOT, '.wrangler', 'state');

const firstRun = !existsSync(DEV_VARS);
const existing = firstRun ? '' : readFileSync(DEV_VARS, 'utf8');
const completed = completeDevVars(existing);
if (completed.added.length > 0) {
  writeFileSync(DEV_VARS, completed.text, { mode: 0o600 });
  if (!firstRun) console.log(`Added ${completed.added.join(' and ')} to ${DEV_VARS} (missing or empty there); kept everything else.`);
}
const vars = parseDevVars(completed.text);
const port = Number(process.env.PORT ?? 8787);

const server = await startServer({
  port,
  persistTo: STATE_DIR,
  stdio: 'inherit',
  // wrangler reads .dev.vars itself; pass them explicitly when they live elsewhere.
  vars: process.env.KNOCK_DEV_VARS ? vars : {},
});
const stop = async () => {
  await server.stop();
  process.exit(0);
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
server.child.on('exit', (code) => process.exit(code ?? 1));

// The demo accounts' passwords and tokens are kept beside the state they belong to, so every
// run can print them (deleting the state deletes them too).
const DEMO_ACCOUNTS = join(STATE_DIR, 'demo-accounts.json');
let demo = null;
try {
  const { seedDemo, activeAccounts } = await import('./demo-data.mjs');
  demo = await seedDemo(server.url, vars.ADMIN_TOKEN);
  if (demo.users.length > 0) writeFileSync(DEMO_ACCOUNTS, JSON.stringify(demo, null, 2), { mode: 0o600 });
  else if (existsSync(DEMO_ACCOUNTS)) demo = JSON.parse(readFileSync(DEMO_ACCOUNTS, 'utf8'));
  // Only the accounts that can sign in now: one blocked or deleted since is left out.
  if (demo?.users) demo.users = await activeAccounts(server.url, vars.ADMIN_TOKEN, demo.users);
} catch (e) {
  console.error('Could not create the demo data:', e);
}

const lines = [
  '',
  `Knock is running at ${server.url}${firstRun ? ' (first run: wrote .dev.vars)' : ''}`,
  `  Sign in:      ${server.url}/users/sign_in`,
  `  API:          ${server.url}/api/v4   (OpenAPI: ${server.url}/api/v4/openapi.json)`,
  `  Admin token:  ${vars.ADMIN_TOKEN}   (acts as user root; header PRIVATE-TOKEN)`,
];
if (demo?.users?.length) {
  lines.push('  Demo accounts:');
  for (const u of demo.users) lines.push(`    ${u.username.padEnd(8)} password ${u.password}${u.note ? `   ${u.note}` : ''}`);
}
lines.push('Press Ctrl+C to stop.', '');
console.log(lines.join('\n'));
