import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { expectContract, pathnameOf, type RedirectPolicy } from './support/contract';
import { fuzzParameters, hostileSegment, hostileValue, jsonBodies, reportCases, timeoutFor } from './support/fuzz';
import { ADMIN, call, createUser, jsonBody, ORIGIN, unique } from './support/http';
import { digestTables, directoryStub } from './support/storage';
import { credentialsFor, registerApp, signedInBrowser, TOKEN_KINDS, type Credentials, type OAuthApp } from './support/world';

/** Every route of the contract, with placeholders for ids and paths, and the methods it answers. */
const ROUTES: [string, string[]][] = [
  ['/api/v4/version', ['GET']], ['/api/v4/user', ['GET']], ['/api/v4/users', ['GET', 'POST']], ['/api/v4/users/{uid}', ['GET']],
  ['/api/v4/users/{uid}/impersonation_tokens', ['POST']], ['/api/v4/users/{victim}', ['PUT', 'DELETE']],
  ...['block', 'unblock', 'deactivate', 'activate'].map((action): [string, string[]] => [`/api/v4/users/{victim}/${action}`, ['POST']]), ['/api/v4/applications', ['GET', 'POST']], ['/api/v4/applications/{id}', ['DELETE']],
  ['/api/v4/openapi.json', ['GET']], ['/api/v4/user/personal_access_tokens', ['POST']], ['/api/v4/users/{uid}/personal_access_tokens', ['POST']],
  ['/api/v4/personal_access_tokens', ['GET']], ['/api/v4/personal_access_tokens/self', ['GET', 'DELETE']], ['/api/v4/personal_access_tokens/{id}', ['GET', 'DELETE']],
  ['/api/v4/access_requests', ['GET']], ['/api/v4/user/access_requests', ['GET']], ['/api/v4/user/access_alerts', ['GET']], ['/api/v4/audit_events', ['GET']], ['/api/v4/audit_events/{id}', ['GET']],
  ...['groups', 'projects'].flatMap((kind): [string, string[]][] => [
    [`/api/v4/${kind}`, ['GET', 'POST']], [`/api/v4/${kind}/{ns}`, ['GET', 'PUT', 'DELETE']], [`/api/v4/${kind}/{ns}/access_requests`, ['GET', 'POST']],
    [`/api/v4/${kind}/{ns}/access_requests/{uid}`, ['DELETE']], [`/api/v4/${kind}/{ns}/access_requests/{uid}/approve`, ['PUT']],
    [`/api/v4/${kind}/{ns}/access_request_rules`, ['GET', 'PUT', 'DELETE']],
    [`/api/v4/${kind}/{ns}/members`, ['GET', 'POST']], [`/api/v4/${kind}/{ns}/members/all`, ['GET']],
    [`/api/v4/${kind}/{ns}/members/{uid}`, ['GET', 'PUT', 'DELETE']], [`/api/v4/${kind}/{ns}/members/all/{uid}`, ['GET']],
    [`/api/v4/${kind}/{ns}/audit_events`, ['GET']], [`/api/v4/${kind}/{ns}/audit_events/{id}`, ['GET']],
  ]),
  ['/', ['GET']], ['/users/sign_in', ['GET', 'POST']], ['/users/sign_up', ['GET', 'POST']], ['/users/sign_out', ['POST']],
  ['/oauth/authorized_applications', ['GET']], ['/oauth/authorized_applications/revoke', ['POST']], ['/login/oauth/authorize', ['GET', 'POST']],
  ['/login/oauth/access_token', ['POST', 'OPTIONS']], ['/login/oauth/revoke', ['POST']], ['/login/oauth/introspect', ['POST']],
  ['/.well-known/oauth-authorization-server', ['GET']], ['/assets/knock.css', ['GET']], ['/api/v4/{id}', ['GET']], ['/{id}', ['GET']], ['/{id}/{ns}', ['POST']],
];

const FIELDS = [
  'username', 'name', 'password', 'email', 'admin', 'redirect_uri', 'scopes', 'confidential', 'access_level', 'path', 'parent_id',
  'namespace_id', 'visibility', 'request_access_enabled', 'client_id', 'client_secret', 'code', 'grant_type', 'refresh_token',
  'code_verifier', 'token', 'token_type_hint', 'return_to', 'decision', 'state', 'scope', 'response_type', 'user_id', 'expires_at',
  'code_challenge', 'code_challenge_method', 'description', 'reason', 'break_glass', 'reason_required', 'max_duration_hours',
  'pending_expires_after_days', 'approvals_required', 'auto_approve',
];

const QUERY_NAMES = [
  'page', 'per_page', 'access_level', 'username', 'search', 'min_access_level', 'membership', 'client_id', 'redirect_uri', 'state',
  'scope', 'response_type', 'code_challenge', 'code_challenge_method', 'return_to', 'expires_at', 'active', 'blocked', 'hard_delete', 'reason', 'break_glass',
  'user_id', 'revoked', 'created_before', 'created_after', 'last_used_before', 'last_used_after', 'expires_before', 'expires_after',
  'source_type', 'min_requested_at',
];

const METHODS = ['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS'] as const;


const EXTENSION_REDIRECTS = ['https://odhclnlgfnipbpcdeojbgcidnleblgjk.chromiumapp.org/', 'https://1315abde4d9b1c9a3cc607708496f69c2f6b263f.extensions.allizom.org/'];

interface Case {
  method: (typeof METHODS)[number];
  template: string;
  ns: string;
  uid: string;
  id: string;
  victim: string;
  query: Record<string, string>;
  token: (typeof TOKEN_KINDS)[number];
  session: 'none' | 'signed-in' | 'garbage-cookie';
  csrf: 'none' | 'valid' | 'wrong';
  origin: 'none' | 'same' | 'evil' | 'null';
  body:
    | { kind: 'none' }
    | { kind: 'json'; type: string; text: string }
    | { kind: 'form' | 'multipart'; fields: Record<string, string> }
    | { kind: 'raw'; type: string; text: string };
}

describe('fuzzing every route with hostile requests', () => {
  let creds: Credentials;
  let app: OAuthApp;
  let session: { cookie: string; csrf: string };
  /** Real ids and paths of groups and projects (public and private), of a requester and of personal access tokens. */
  const known: string[] = [];
  /**
   * The ids of the fuzzer's own tokens, and a token to revoke instead: revoking its own
   * credentials would leave the rest of the run unauthenticated (fuzz-tokens.test.ts covers that).
   */
  const ownTokenIds = new Set<string>();
  let sacrificialTokenId = '';
  /** Users the fuzzer may edit, block or delete (never the ones whose credentials it uses). */
  const victims: string[] = [];
  const spared: string[] = [];

  beforeAll(async () => {
    creds = await credentialsFor('fuzzer');
    app = await registerApp(['https://client.example/cb', 'http://127.0.0.1/cb']);
    const make = async (kind: string, body: Record<string, unknown>) => {
      const path = unique('fz');
      const res = await call(`/api/v4/${kind}`, jsonBody({ name: path, path, visibility: 'public', ...body }, ADMIN));
      expect(res.status).toBe(201);
      const made = (await res.json()) as { id: number; full_path?: string; path_with_namespace?: string };
      known.push(String(made.id), encodeURIComponent(made.full_path ?? made.path_with_namespace!));
      return made.id;
    };
    const group = await make('groups', {});
    await make('groups', { parent_id: group, visibility: 'private' });
    const project = await make('projects', { namespace_id: group });
    const requester = await createUser('fzreq');
    expect((await call(`/api/v4/projects/${project}/access_requests`, { method: 'POST', headers: requester.headers })).status).toBe(201);
    known.push(String(requester.id));
    spared.push(String(creds.user.id), String(requester.id));
    for (let i = 0; i < 4; i++) victims.push(String((await createUser('fzvic')).id));
    for (const user of [requester, creds.user]) {
      const pat = await call(`/api/v4/users/${user.id}/personal_access_tokens`, jsonBody({ name: 'fuzz', scopes: ['read_api'] }, ADMIN));
      expect(pat.status).toBe(201);
      known.push(String(((await pat.json()) as { id: number }).id));
    }
    sacrificialTokenId = known.at(-1)!;
    for (const headers of Object.values(creds.tokens)) {
      const self = await call('/api/v4/personal_access_tokens/self', { headers });
      if (self.status === 200) ownTokenIds.add(String(((await self.json()) as { id: number }).id));
    }
    expect(ownTokenIds.size).toBe(2);
    const signedIn = await signedInBrowser(creds.user);
    session = { cookie: [...signedIn.browser.cookies].map(([k, v]) => `${k}=${v}`).join('; '), csrf: signedIn.csrf };
  });

  /** Authorization responses may only go to a redirect URI registered for the client. */
  const redirects: RedirectPolicy = (location, { path }) => {
    if (location.origin === ORIGIN) return true;
    if (pathnameOf(path) !== '/login/oauth/authorize') return false;
    const target = `${location.origin}${location.pathname}`;
    if (app.redirectUris.includes(target) || EXTENSION_REDIRECTS.includes(target)) return true;
    return location.protocol === 'http:' && location.hostname === '127.0.0.1' && location.pathname === '/cb';
  };

  const queryValue = (name: string): fc.Arbitrary<string> => {
    switch (name) {
      case 'client_id':
        return fc.oneof({ arbitrary: fc.constant(app.clientId), weight: 3 }, fc.constant('knock-extension'), hostileValue);
      case 'redirect_uri':
        return fc.oneof(
          { arbitrary: fc.constantFrom(...app.redirectUris), weight: 3 },
          fc.constantFrom( ...EXTENSION_REDIRECTS, 'http://127.0.0.1:4711/cb', 'https://client.example/cb/../x', 'https://client.example/cb?x=1',
            'https://client.example.evil.example/cb', 'https://CLIENT.example/cb', 'https://client.example/cb#frag', 'https://evil.example/',
            '//evil.example/cb', 'javascript:alert(1)', 'http://127.0.0.1@evil.example/cb', 'http://localhost/cb', 'https://client.example:443/cb',
          ),
          hostileValue,
        );
      case 'code_challenge':
        return fc.oneof(fc.constant('E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM'), hostileValue);
      case 'code_challenge_method':
        return fc.constantFrom('S256', 'plain', 's256', '');
      case 'source_type':
        return fc.oneof(fc.constantFrom('Namespace', 'Project', 'namespace', 'Group'), hostileValue);
      case 'min_requested_at':
        return fc.oneof(fc.constantFrom('2026-11-21', '2026-11-21T12:00:00Z', '2026-11-21T12:00:00.123+02:00', '2026-02-30', '9999-12-31T23:59:59Z', '+275760-09-13'), hostileValue);
      case 'return_to':
        return fc.constantFrom('/', '//evil.example', '/\\evil.example', 'https://evil.example', '/%2F%2Fevil.example', 'javascript:alert(1)', '/\t/evil');
      default:
        return hostileValue;
    }
  };

  const caseArbitrary = (): fc.Arbitrary<Case> => {
    const ids = [fc.constant(String(creds.user.id)), fc.constant(String(app.id)), fc.constant(creds.user.username), fc.constantFrom(...known)];
    const fields = fc.dictionary(fc.constantFrom(...FIELDS), hostileValue, { maxKeys: 6 });
    return fc.record({
      route: fc.constantFrom(...ROUTES),
      anyMethod: fc.option(fc.constantFrom(...METHODS), { freq: 4 }),
      ns: hostileSegment(ids),
      uid: hostileSegment(ids),
      id: hostileSegment(ids),
      victim: hostileSegment([fc.constantFrom(...victims)]).filter((v) => !spared.includes(v)),
      query: fc.oneof(
        fc.uniqueArray(fc.constantFrom(...QUERY_NAMES), { maxLength: 5 }),
        // An authorization request, mostly well-formed, so the fuzzing reaches consent and redirects.
        fc.tuple(fc.subarray(['client_id', 'redirect_uri', 'response_type', 'state', 'scope', 'code_challenge', 'code_challenge_method'])).map(([names]) => [
          'client_id', ...names,
        ]),
      ).chain((names) => fc.record(Object.fromEntries([...new Set(names)].map((n) => [n, queryValue(n)])) as Record<string, fc.Arbitrary<string>>)),
      token: fc.oneof({ arbitrary: fc.constantFrom(...TOKEN_KINDS), weight: 2 }, { arbitrary: fc.constantFrom('api', 'admin'), weight: 1 }),
      session: fc.constantFrom('none', 'signed-in', 'garbage-cookie'),
      csrf: fc.constantFrom('none', 'valid', 'wrong'),
      origin: fc.constantFrom('none', 'same', 'evil', 'null'),
      body: fc.oneof(
        fc.constant({ kind: 'none' as const }),
        fc.record({
          kind: fc.constant('json' as const),
          type: fc.constantFrom('application/json', 'application/json; charset=utf-8', 'APPLICATION/JSON', 'application/vnd.api+json'),
          text: jsonBodies(FIELDS),
        }),
        fc.record({ kind: fc.constantFrom('form' as const, 'multipart' as const), fields }),
        fc.record({
          kind: fc.constant('raw' as const),
          type: fc.constantFrom('text/plain', 'application/xml', 'multipart/form-data', 'application/x-www-form-urlencoded', 'application/octet-stream', 'application/json', ';;;', 'x'),
          text: fc.oneof(fc.string({ unit: 'binary', maxLength: 64 }), fc.constant('a=1&a=2&b=%zz&%%=1')),
        }),
      ),
    }).chain(({ route, anyMethod, ...rest }) =>
      fc.constantFrom(...route[1]).map((method) => ({ ...rest, template: route[0], method: (anyMethod ?? method) as Case['method'] })),
    ) as fc.Arbitrary<Case>;
  };

  const toRequest = (c: Case): { path: string; init: RequestInit } => {
    const query = new URLSearchParams(c.query).toString();
    const id = c.template.includes('personal_access_tokens/{id}') && ownTokenIds.has(c.id) ? sacrificialTokenId : c.id;
    const path = c.template.replace('{ns}', c.ns).replace('{uid}', c.uid).replace('{id}', id).replace('{victim}', c.victim) + (query ? `?${query}` : '');
    const headers: Record<string, string> = { ...creds.tokens[c.token] };
    if (c.session === 'signed-in') headers.Cookie = session.cookie;
    if (c.session === 'garbage-cookie') headers.Cookie = 'knock_session=forged; knock_csrf=forged-csrf-token-value-123';
    if (c.origin === 'same') headers.Origin = ORIGIN;
    if (c.origin === 'evil') headers.Origin = 'https://evil.example';
    if (c.origin === 'null') headers.Origin = 'null';
    const csrfField: Record<string, string> =
      c.csrf === 'valid' ? { authenticity_token: session.csrf } : c.csrf === 'wrong' ? { authenticity_token: 'forged-csrf-token-value-123' } : {};
    let body: BodyInit | undefined;
    if (c.method !== 'GET' && c.method !== 'HEAD') {
      if (c.body.kind === 'json' || c.body.kind === 'raw') {
        headers['Content-Type'] = c.body.type;
        body = c.body.text;
      } else if (c.body.kind === 'form') {
        headers['Content-Type'] = 'application/x-www-form-urlencoded';
        body = new URLSearchParams({ ...c.body.fields, ...csrfField }).toString();
      } else if (c.body.kind === 'multipart') {
        const form = new FormData();
        for (const [k, v] of Object.entries({ ...c.body.fields, ...csrfField })) form.append(k, v);
        body = form;
      }
    }
    return { path, init: { method: c.method, headers, body, redirect: 'manual' } };
  };

  const single = fuzzParameters(600);
  const refusals = fuzzParameters(150);

  it('answers every request in the contract: no 5xx, JSON errors in the contract shapes, pages framed by nobody', async () => {
    const params = single;
    let cases = 0;
    await fc.assert(
      fc.asyncProperty(caseArbitrary(), async (c) => {
        cases++;
        const { path, init } = toRequest(c);
        const res = await call(path, init);
        await expectContract({ method: c.method, path, res }, redirects);
      }),
      params,
    );
    reportCases('single requests on every route', cases);
    expect(cases).toBeGreaterThanOrEqual(params.numRuns);
  }, timeoutFor(single.numRuns));

  it('changes nothing stored when it refuses a request', async () => {
    const params = refusals;
    const durable = ['users', 'applications', 'namespaces', 'access_tokens'];
    // When a token was last used is recorded for refused calls too, after the answer, as GitLab does.
    const digest = async () => (await digestTables(directoryStub(), durable)).replace(/"last_used_at":(null|"[^"]*")/g, '');
    let cases = 0;
    await fc.assert(
      fc.asyncProperty(caseArbitrary(), async (c) => {
        cases++;
        const before = await digest();
        const { path, init } = toRequest(c);
        const res = await call(path, init);
        await expectContract({ method: c.method, path, res }, redirects);
        if (res.status >= 400) expect(await digest(), `${c.method} ${path} → ${res.status} changed storage`).toBe(before);
      }),
      { ...params, seed: params.seed + 1 },
    );
    reportCases('refusals change nothing', cases);
  }, timeoutFor(refusals.numRuns));
});
