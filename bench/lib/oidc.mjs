// Issue 24's speed goals for OpenID Connect (`BENCH_ONLY=oidc`): discovery and the JWKS against
// the hello baseline (served from the isolate's memory), `/oauth/userinfo` against
// `GET /api/v4/user` with one token (the group claims must not cost a walk over the user's
// groups), and a code exchange that signs an id_token against one that does not.
import { Browser, call, formFields } from './http.mjs';
import { CONNECTIONS, measureGroup, measurePair } from './load.mjs';
import { PASSWORD, REDIRECT_URI, inPool } from './setup.mjs';

export const OPENID = 'api openid profile email';
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
/** Groups each user owns, so the claims have something to say. */
const GROUPS_EACH = 3;

export const application = async (knock, adminToken, scopes) => {
  const { json } = await call(`${knock}/api/v4/applications`, {
    method: 'POST',
    token: adminToken,
    body: { name: `Bench ${scopes}`, redirect_uri: REDIRECT_URI, scopes, confidential: true },
    expect: 201,
  });
  return { clientId: json.application_id, secret: json.secret, scopes };
};

const authorizePath = (app) =>
  `/oauth/authorize?${new URLSearchParams({ client_id: app.clientId, redirect_uri: REDIRECT_URI, response_type: 'code', scope: app.scopes, state: 'bench' })}`;

const codeOf = (location) => new URL(location).searchParams.get('code');

/** A user who owns a few groups, signed in, who has consented to both applications once. */
export async function user(knock, adminToken, apps, username) {
  const { json: made } = await call(`${knock}/api/v4/users`, {
    method: 'POST',
    token: adminToken,
    body: { username, name: `Bench ${username}`, password: PASSWORD, email: `${username}@bench.test` },
    expect: 201,
  });
  const { json: issued } = await call(`${knock}/api/v4/users/${made.id}/impersonation_tokens`, { method: 'POST', token: adminToken, body: { name: 'bench', scopes: ['api'] }, expect: 201 });
  for (let i = 0; i < GROUPS_EACH; i++) {
    await call(`${knock}/api/v4/groups`, { method: 'POST', token: issued.token, body: { name: `${username}-${i}`, path: `${username}-${i}` }, expect: 201 });
  }
  const browser = new Browser(knock);
  const page = await browser.request('/users/sign_in');
  const signedIn = await browser.request('/users/sign_in', { method: 'POST', form: { ...formFields(page.text), username, password: PASSWORD } });
  if (signedIn.status !== 303) throw new Error(`sign-in of ${username} → ${signedIn.status}`);
  for (const app of apps) {
    const consent = await browser.request(authorizePath(app));
    const approved = await browser.request('/login/oauth/authorize', { method: 'POST', form: { ...formFields(consent.text), decision: 'authorize' } });
    if (approved.status !== 303) throw new Error(`consent of ${username} → ${approved.status}`);
  }
  return { username, browser };
}

/** A code from a remembered consent (302, no page). */
export const nextCode = async (u, app) => {
  const res = await u.browser.request(authorizePath(app));
  if (res.status !== 302) throw new Error(`authorize (remembered consent) → ${res.status}`);
  return codeOf(res.location);
};

export const exchangeForm = (app, code) =>
  new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI, client_id: app.clientId, client_secret: app.secret }).toString();

/**
 * @param {{ urls: Record<string, string>, adminToken: string, codes: number, warm: number, log: (m: string) => void }} o
 */
export async function oidcScenarios({ urls, adminToken, codes, warm, log }) {
  const knock = urls.knock;
  const [plain, openid] = await Promise.all([application(knock, adminToken, 'api'), application(knock, adminToken, OPENID)]);
  const users = await inPool(Array.from({ length: CONNECTIONS }, (_, i) => `oidc${i}`), 4, (name) => user(knock, adminToken, [plain, openid], name));
  log(`oidc: ${users.length} signed-in users owning ${GROUPS_EACH} groups each, consented to an application with and one without openid`);

  // discovery and JWKS beside the hello baseline
  const hello = { url: `${urls.baseline}/json` };
  const discovery = { url: `${knock}/.well-known/openid-configuration` };
  const jwks = { url: `${knock}/oauth/discovery/keys` };
  for (const t of [discovery, jwks]) await call(t.url, { expect: 200 });
  log('oidc: hello baseline, discovery, JWKS');
  const documents = await measureGroup([
    { id: 'hello', target: hello },
    { id: 'discovery', target: discovery },
    { id: 'jwks', target: jwks },
  ]);

  // userinfo beside GET /api/v4/user, one token with api and openid
  const { json: tokens } = await call(`${knock}/oauth/token`, { method: 'POST', form: Object.fromEntries(new URLSearchParams(exchangeForm(openid, await nextCode(users[0], openid)))), expect: 200 });
  const bearer = { authorization: `Bearer ${tokens.access_token}` };
  const { json: claims } = await call(`${knock}/oauth/userinfo`, { headers: bearer, expect: 200 });
  if (claims.groups?.length !== GROUPS_EACH) throw new Error(`userinfo named ${claims.groups?.length} groups, not ${GROUPS_EACH}`);
  log('oidc: GET /api/v4/user, GET /oauth/userinfo');
  const reads = await measureGroup([
    { id: 'user', target: { url: `${knock}/api/v4/user`, headers: bearer } },
    { id: 'userinfo', target: { url: `${knock}/oauth/userinfo`, headers: bearer } },
  ]);

  // code exchange with and without openid, the same number each, alternating
  const total = codes + warm + 2 * CONNECTIONS * 4;
  log(`oidc: minting ${total} codes for each application`);
  const pools = {};
  for (const app of [plain, openid]) pools[app.scopes] = await inPool(Array.from({ length: total }, (_, i) => users[i % users.length]), CONNECTIONS, (u) => nextCode(u, app));
  const exchangeTarget = (app) => ({
    url: `${knock}/oauth/token`,
    method: 'POST',
    headers: FORM,
    requests: [{ setupRequest: (req) => ({ ...req, body: exchangeForm(app, pools[app.scopes].pop() ?? 'knock_ac_1_exhausted0000000000') }) }],
  });
  log('oidc: code exchange without and with openid');
  const exchanges = await measurePair(exchangeTarget(plain), exchangeTarget(openid), { amount: codes, warmupAmount: warm });

  const figures = {
    hello: documents.hello,
    discovery: documents.discovery,
    jwks: documents.jwks,
    user: reads.user,
    userinfo: reads.userinfo,
    exchange: exchanges.a,
    exchangeOpenid: exchanges.b,
  };
  for (const [id, m] of Object.entries(figures)) log(`  ${id}: ${m.rps.toFixed(0)} req/s, p50 ${m.p50.toFixed(2)} ms${m.failed ? `, ${m.failed} failed ${JSON.stringify(m.statuses)}` : ''}`);
  return {
    available: true,
    groupsEach: GROUPS_EACH,
    figures,
    ratios: {
      discoveryToHello: documents.discovery.rps / documents.hello.rps,
      jwksToHello: documents.jwks.rps / documents.hello.rps,
      userinfoToUser: reads.userinfo.p50 / reads.user.p50,
      exchangeOpenidToPlain: exchanges.b.p50 / exchanges.a.p50,
    },
  };
}
