// What `npm start` keeps in .dev.vars (dotenv syntax, read by wrangler): the secrets the Worker
// needs locally. Pure functions, so the rules are tested in plain Node (test/unit).
import { randomBytes } from 'node:crypto';

/** The secrets `npm start` needs, each with the prefix of a generated value. */
const DEV_SECRETS = [
  // Acts as user root; also how `npm start` creates the demo data.
  { name: 'ADMIN_TOKEN', prefix: 'knock_admin_' },
  // Keys every stored hash (worker/store/tokens.ts): without it the Worker answers 503.
  { name: 'TOKEN_HASH_KEY', prefix: '' },
];

export const DEV_VARS_HEADER = '# Local secrets for `npm start` (git-ignored). Deployed Workers use `wrangler secret put`.\n';

const ASSIGNMENT = /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^#]*?))\s*(?:#.*)?$/;

/** The variables a .dev.vars text assigns (a later assignment wins, as in dotenv). */
export const parseDevVars = (text) => {
  const vars = {};
  for (const line of text.split(/\r?\n/)) {
    const m = ASSIGNMENT.exec(line);
    if (m) vars[m[1]] = m[2] ?? m[3] ?? m[4];
  }
  return vars;
};

/** A fresh random secret. */
const generateSecret = (prefix) => prefix + randomBytes(24).toString('base64url');

/**
 * `text` with every missing or empty secret of DEV_SECRETS added, keeping every other line as it
 * is (an empty assignment of an added secret is dropped so the new value is the only one).
 * `added` names the secrets added, in DEV_SECRETS order; when it is empty `text` is unchanged.
 */
export const completeDevVars = (text, generate = generateSecret) => {
  const present = parseDevVars(text);
  const added = DEV_SECRETS.filter(({ name }) => !present[name]);
  if (added.length === 0) return { text, added: [] };
  const names = new Set(added.map(({ name }) => name));
  const kept = text.split('\n').filter((line) => {
    const m = ASSIGNMENT.exec(line.replace(/\r$/, ''));
    return !(m && names.has(m[1]));
  });
  let out = kept.join('\n');
  if (out.trim() === '') out = DEV_VARS_HEADER;
  else if (!out.endsWith('\n')) out += '\n';
  for (const { name, prefix } of added) out += `${name}="${generate(prefix)}"\n`;
  return { text: out, added: added.map(({ name }) => name) };
};
