// Model-based fuzzing of the token service (RFC 6749, RFC 9700): random sequences of new grants,
// refreshes, retried and reused refresh tokens, replayed codes, revocations (by either token,
// and from the authorized-applications page) and the clock moving on. After every step, each
// token works exactly when the model says it should.
import fc from 'fast-check';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { clock } from '../../worker/clock';
import { expectContract } from './support/contract';
import { fuzzParameters, reportCases, timeoutFor } from './support/fuzz';
import { ADMIN, call, jsonBody } from './support/http';
import { authorizeCode, Browser, createUser, csrfOf, refresh, registerApp, tokenCall, whoAmI, type App, type Tokens } from './support/oauth';
import { realNow } from './support/clock';

interface Pair {
  tokens: Tokens;
  /** Model time (s) when this pair's refresh token was rotated, if it was. */
  rotatedAt?: number;
}
interface Grant {
  code: string;
  pairs: Pair[];
  revoked: boolean;
}

type Op =
  | { op: 'new' }
  | { op: 'refresh'; grant: number }
  | { op: 'retry previous'; grant: number }
  | { op: 'reuse older'; grant: number; back: number }
  | { op: 'replay code'; grant: number }
  | { op: 'revoke'; grant: number; token: 'latest access' | 'latest refresh' | 'older access' | 'older refresh' }
  | { op: 'revoke on page' }
  | { op: 'block and unblock' }
  | { op: 'wait'; seconds: number };

const ops: fc.Arbitrary<Op> = fc.oneof(
  { arbitrary: fc.constant({ op: 'new' as const }), weight: 3 },
  { arbitrary: fc.record({ op: fc.constant('refresh' as const), grant: fc.nat() }), weight: 5 },
  { arbitrary: fc.record({ op: fc.constant('retry previous' as const), grant: fc.nat() }), weight: 3 },
  { arbitrary: fc.record({ op: fc.constant('reuse older' as const), grant: fc.nat(), back: fc.integer({ min: 2, max: 4 }) }), weight: 1 },
  { arbitrary: fc.record({ op: fc.constant('replay code' as const), grant: fc.nat() }), weight: 1 },
  {
    arbitrary: fc.record({
      op: fc.constant('revoke' as const),
      grant: fc.nat(),
      token: fc.constantFrom('latest access' as const, 'latest refresh' as const, 'older access' as const, 'older refresh' as const),
    }),
    weight: 1,
  },
  { arbitrary: fc.constant({ op: 'revoke on page' as const }), weight: 1 },
  { arbitrary: fc.constant({ op: 'block and unblock' as const }), weight: 1 },
  { arbitrary: fc.record({ op: fc.constant('wait' as const), seconds: fc.constantFrom(5, 29, 31, 120) }), weight: 2 },
);

describe('fuzzing the token service against a model of grants, rotation and revocation', () => {
  let app: App;
  beforeAll(async () => {
    app = await registerApp();
  });

  const params = fuzzParameters(20);

  it(
    'every token works exactly when the model says so, and every answer keeps the contract',
    async () => {
      let cases = 0;
      let operations = 0;
      await fc.assert(
        fc.asyncProperty(fc.array(ops, { minLength: 3, maxLength: 12 }), async (sequence) => {
          cases++;
          let offset = 0;
          clock.now = () => realNow() + offset * 1000;
          const user = await createUser('tok');
          const browser = new Browser();
          await browser.signIn(user);
          const grants: Grant[] = [];
          const active = () => grants.filter((g) => !g.revoked);
          const send = async (path: string, res: Response) => {
            await expectContract({ method: 'POST', path, res: res.clone() });
            return res;
          };
          const revokeCall = (token: string) =>
            tokenCall({ client_id: app.clientId, client_secret: app.secret!, token }, { form: true, path: '/login/oauth/revoke' });

          for (const op of [{ op: 'new' } as Op, ...sequence]) {
            operations++;
            const g = 'grant' in op && grants.length > 0 ? grants[op.grant % grants.length] : null;
            const where = JSON.stringify(op);
            switch (op.op) {
              case 'new': {
                const { code } = await authorizeCode(browser, app);
                const res = await send('/login/oauth/access_token', await tokenCall({ client_id: app.clientId, client_secret: app.secret!, code, redirect_uri: app.redirectUri }));
                expect(res.status, where).toBe(200);
                grants.push({ code, pairs: [{ tokens: (await res.json()) as Tokens }], revoked: false });
                break;
              }
              case 'refresh': {
                if (!g) break;
                const latest = g.pairs.at(-1)!;
                const res = await send('/login/oauth/access_token', await refresh(app, latest.tokens.refresh_token));
                expect(res.status, where).toBe(g.revoked ? 400 : 200);
                if (res.status === 200) {
                  latest.rotatedAt = offset;
                  g.pairs.push({ tokens: (await res.json()) as Tokens });
                }
                break;
              }
              case 'retry previous': {
                if (!g || g.pairs.length < 2) break;
                const previous = g.pairs.at(-2)!;
                const res = await send('/login/oauth/access_token', await refresh(app, previous.tokens.refresh_token));
                // An identical retry within 30 s whose successor has not been used gets the same answer.
                const successor = g.pairs.at(-1)!;
                const graced = !g.revoked && successor.rotatedAt === undefined && offset - previous.rotatedAt! < 30;
                expect(res.status, `${where} graced=${graced}`).toBe(graced ? 200 : 400);
                if (graced) expect(((await res.json()) as Tokens).access_token).toBe(successor.tokens.access_token);
                else g.revoked = true;
                break;
              }
              case 'reuse older': {
                if (!g || g.pairs.length <= op.back) break;
                const older = g.pairs.at(-1 - op.back)!;
                const res = await send('/login/oauth/access_token', await refresh(app, older.tokens.refresh_token));
                expect(res.status, where).toBe(400);
                g.revoked = true;
                break;
              }
              case 'replay code': {
                if (!g) break;
                const res = await send('/login/oauth/access_token', await tokenCall({ client_id: app.clientId, client_secret: app.secret!, code: g.code, redirect_uri: app.redirectUri }));
                expect(res.status, where).toBe(400);
                g.revoked = true;
                break;
              }
              case 'revoke': {
                if (!g) break;
                const latest = g.pairs.at(-1)!;
                const older = g.pairs.length > 1 ? g.pairs.at(-2)! : null;
                const token = { 'latest access': latest.tokens.access_token, 'latest refresh': latest.tokens.refresh_token, 'older access': older?.tokens.access_token, 'older refresh': older?.tokens.refresh_token }[op.token];
                if (!token) break;
                const res = await send('/login/oauth/revoke', await revokeCall(token));
                expect(res.status, where).toBe(200);
                // An ended access token names no live grant any more; any refresh token of the grant, or its live access token, ends it.
                if (op.token !== 'older access' && !(op.token === 'latest access' && g.revoked)) g.revoked = true;
                break;
              }
              case 'revoke on page': {
                const page = await browser.get('/oauth/authorized_applications');
                const html = await page.text();
                if (!html.includes(`value="${app.clientId}"`)) {
                  expect(active(), where).toHaveLength(0);
                  break;
                }
                const res = await browser.post('/oauth/authorized_applications/revoke', { client_id: app.clientId, authenticity_token: csrfOf(html) });
                expect(res.status, where).toBe(303);
                for (const grant of grants) grant.revoked = true;
                break;
              }
              case 'block and unblock': {
                // A block ends every grant of the user, and unblocking brings none back; the
                // browser session ended too, so the user signs in again.
                for (const action of ['block', 'unblock']) {
                  const res = await call(`/api/v4/users/${user.id}/${action}`, { method: 'POST', headers: ADMIN });
                  expect(res.status, `${where}: ${action}`).toBe(201);
                }
                for (const grant of grants) grant.revoked = true;
                expect((await browser.signIn(user)).status, where).toBe(303);
                break;
              }
              case 'wait':
                offset += op.seconds;
                break;
            }
            // Every token is alive exactly when the model says: the latest access token of a live grant.
            for (const [i, grant] of grants.entries()) {
              const latest = await whoAmI(grant.pairs.at(-1)!.tokens.access_token);
              expect(latest.status, `after ${where}: latest access token of grant ${i}`).toBe(grant.revoked ? 401 : 200);
              if (grant.pairs.length > 1) expect((await whoAmI(grant.pairs.at(-2)!.tokens.access_token)).status, `after ${where}: previous access token of grant ${i}`).toBe(401);
            }
          }
        }),
        params,
      );
      reportCases(`token-service sequences (${operations} operations)`, cases);
    },
    timeoutFor(params.numRuns, 2000),
  );
});

// Model-based fuzzing of personal access tokens: random creations (by the user with one of their
// tokens, or by an administrator; any scopes; expiry dates valid or not), revocations (by id,
// through `/self`, by the administrator), the user blocked and unblocked (which revokes every
// live token), uses, listings and the clock moving on by hours to months. After every step, each token works exactly when the model says, with exactly its scopes.
type PatOp =
  | { op: 'create'; via: number | 'admin'; scopes: string[]; days: number | null }
  | { op: 'revoke'; target: number; via: number | 'admin' | 'self' }
  | { op: 'list'; via: number | 'admin' }
  | { op: 'block and unblock' }
  | { op: 'wait'; hours: number };

const via = fc.oneof(fc.nat(), fc.constant('admin' as const));
const patOps: fc.Arbitrary<PatOp> = fc.oneof(
  {
    arbitrary: fc.record({
      op: fc.constant('create' as const),
      via,
      scopes: fc.subarray(['api', 'read_api', 'read_user'], { minLength: 1 }),
      days: fc.oneof(fc.constant(null), fc.integer({ min: -1, max: 370 })),
    }),
    weight: 4,
  },
  { arbitrary: fc.record({ op: fc.constant('revoke' as const), target: fc.nat(), via: fc.oneof(via, fc.constant('self' as const)) }), weight: 2 },
  { arbitrary: fc.record({ op: fc.constant('list' as const), via }), weight: 1 },
  { arbitrary: fc.constant({ op: 'block and unblock' as const }), weight: 1 },
  { arbitrary: fc.record({ op: fc.constant('wait' as const), hours: fc.constantFrom(6, 24, 30 * 24, 200 * 24) }), weight: 2 },
);

describe('fuzzing personal access tokens against a model of expiry, scopes and revocation', () => {
  const params = fuzzParameters(20);
  const DAY_S = 24 * 3600;

  interface ModelToken {
    id: number;
    token: string;
    scopes: string[];
    /** Epoch seconds (model time). */
    expiresAt: number;
    revoked: boolean;
  }

  it(
    'every token works exactly when and as far as the model says, and every answer keeps the contract',
    async () => {
      let cases = 0;
      let operations = 0;
      await fc.assert(
        fc.asyncProperty(fc.array(patOps, { minLength: 3, maxLength: 12 }), async (sequence) => {
          cases++;
          const base = realNow();
          let offset = 0;
          clock.now = () => base + offset * 1000;
          const now = () => Math.floor(base / 1000) + offset;
          const username = `pat${base.toString(36)}${cases}`;
          const made = await call('/api/v4/users', jsonBody({ username, name: username, password: `pw-${username}-secret` }, ADMIN));
          expect(made.status).toBe(201);
          const userId = ((await made.json()) as { id: number }).id;
          const tokens: ModelToken[] = [];
          const alive = (t: ModelToken) => !t.revoked && now() < t.expiresAt;
          const headersOf = (who: number | 'admin'): Record<string, string> | null =>
            who === 'admin' ? ADMIN : tokens.length ? { 'PRIVATE-TOKEN': tokens[who % tokens.length].token } : null;
          const actor = (who: number | 'admin') => (who === 'admin' ? null : tokens[who % tokens.length]);
          /** What a call with this actor's token answers before its route runs: 401 dead, 403 outside its scopes. */
          const gate = (who: number | 'admin', allowed: string[]): number | null => {
            const t = actor(who);
            if (!t) return null;
            if (!alive(t)) return 401;
            return t.scopes.some((s) => allowed.includes(s)) ? null : 403;
          };
          const send = async (method: string, path: string, headers: Record<string, string>, body?: unknown) => {
            const res = await call(`/api/v4${path}`, body === undefined ? { method, headers } : jsonBody(body, headers, method));
            await expectContract({ method, path: `/api/v4${path}`, res: res.clone() });
            return res;
          };

          const first: PatOp = { op: 'create', via: 'admin', scopes: ['api'], days: null };
          for (const op of [first, ...sequence]) {
            operations++;
            const where = JSON.stringify(op);
            switch (op.op) {
              case 'create': {
                const headers = headersOf(op.via);
                if (!headers) break;
                const today = new Date(now() * 1000).toISOString().slice(0, 10);
                const date = op.days === null ? undefined : new Date((now() + op.days * DAY_S) * 1000).toISOString().slice(0, 10);
                const at = date === undefined ? now() + 365 * DAY_S : Date.parse(`${date}T00:00:00Z`) / 1000;
                const valid = date === undefined || (date > today && at <= now() + 365 * DAY_S);
                const path = op.via === 'admin' ? `/users/${userId}/personal_access_tokens` : '/user/personal_access_tokens';
                const res = await send('POST', path, headers, { name: `t${tokens.length}`, scopes: op.scopes, ...(date ? { expires_at: date } : {}) });
                expect(res.status, where).toBe(gate(op.via, ['api']) ?? (valid ? 201 : 400));
                if (res.status === 201) {
                  const body = (await res.json()) as { id: number; token: string; expires_at: string; scopes: string[] };
                  expect(body.scopes, where).toEqual(op.scopes);
                  expect(body.expires_at, where).toBe(new Date(at * 1000).toISOString().slice(0, 10));
                  tokens.push({ id: body.id, token: body.token, scopes: op.scopes, expiresAt: at, revoked: false });
                }
                break;
              }
              case 'revoke': {
                if (!tokens.length) break;
                const target = tokens[op.target % tokens.length];
                const self = op.via === 'self';
                const headers = self ? { 'PRIVATE-TOKEN': target.token } : headersOf(op.via as number | 'admin')!;
                const res = await send('DELETE', self ? '/personal_access_tokens/self' : `/personal_access_tokens/${target.id}`, headers);
                const expected = self ? (alive(target) ? 204 : 401) : (gate(op.via as number | 'admin', ['api']) ?? 204);
                expect(res.status, where).toBe(expected);
                if (res.status === 204) target.revoked = true;
                break;
              }
              case 'list': {
                const headers = headersOf(op.via);
                if (!headers) break;
                const res = await send('GET', `/personal_access_tokens?per_page=100${op.via === 'admin' ? `&user_id=${userId}` : ''}`, headers);
                const refused = gate(op.via, ['api', 'read_api']);
                expect(res.status, where).toBe(refused ?? 200);
                if (res.status === 200) {
                  const listed = (await res.json()) as { id: number; active: boolean; revoked: boolean }[];
                  expect(listed, where).toEqual([...tokens].reverse().map((t) => expect.objectContaining({ id: t.id, active: alive(t), revoked: t.revoked })));
                }
                break;
              }
              case 'block and unblock': {
                // A block revokes every live token of the user; unblocking brings none back.
                for (const action of ['block', 'unblock']) {
                  expect((await send('POST', `/users/${userId}/${action}`, ADMIN)).status, `${where}: ${action}`).toBe(201);
                }
                for (const t of tokens) if (alive(t)) t.revoked = true;
                break;
              }
              case 'wait':
                offset += op.hours * 3600;
                break;
            }
            // Each token: dead (401), or allowed exactly what its scopes allow.
            for (const [i, t] of tokens.entries()) {
              const h = { 'PRIVATE-TOKEN': t.token };
              const user = await call('/api/v4/user', { headers: h });
              expect(user.status, `after ${where}: token ${i} on /user`).toBe(alive(t) ? 200 : 401);
              if (!alive(t)) continue;
              const groups = await call('/api/v4/groups', { headers: h });
              expect(groups.status, `after ${where}: token ${i} on /groups`).toBe(t.scopes.some((s) => s !== 'read_user') ? 200 : 403);
            }
          }
        }),
        params,
      );
      reportCases(`personal access token sequences (${operations} operations)`, cases);
    },
    timeoutFor(params.numRuns, 2000),
  );
});
