// The rate limits at the edge (worker/edge/rate-limits.ts). The test pool raises wrangler.toml's
// limits out of reach; here each limit's binding is replaced by TEST_TIGHT_LIMIT, 2 a minute.
// A binding counts in fixed windows, so 5 requests meet the limit even when a window turns
// between them.
import { env } from 'cloudflare:workers';
import { createExecutionContext } from 'cloudflare:test';
import { beforeAll, describe, expect, it } from 'vitest';
import { app } from '../../worker/app';
import type { Env } from '../../worker/env';
import { expectError } from './support/contract';
import { Browser, ORIGIN, unique } from './support/http';
import { createSource, person, startWorker } from './support/namespaces';
import { authorizeCode, call, createUser, exchange, registerApp, signedIn } from './support/oauth';
import { Receiver } from './support/receiver';

beforeAll(startWorker, 30_000);

type Binding = 'LIMIT_PROTECTED_PATHS' | 'LIMIT_OAUTH_CLIENT' | 'LIMIT_API' | 'LIMIT_ACCESS_REQUESTS' | 'LIMIT_HOOK_TESTS' | 'LIMIT_DEVICE_USER_CODES' | 'LIMIT_DEVICE_POLLS';
const TIGHT = 2;

/** Calls the Worker with `binding`'s limit at TEST_TIGHT_LIMIT. */
const tight = (binding: Binding) => {
  const limited = { ...env, [binding]: (env as Env & { TEST_TIGHT_LIMIT: RateLimit }).TEST_TIGHT_LIMIT };
  return async (path: string, init: RequestInit = {}) => app.fetch(new Request(`${ORIGIN}${path}`, init), limited, createExecutionContext());
};
const json = (body: unknown, headers: Record<string, string> = {}): RequestInit => ({
  method: 'POST',
  headers: { 'Content-Type': 'application/json', ...headers },
  body: JSON.stringify(body),
});

/** Sends until refused (at most 2 windows' worth and one more); the first answer is never the refusal. */
const untilLimited = async (send: (i: number) => Promise<Response>): Promise<Response> => {
  for (let i = 0; i < 2 * TIGHT + 1; i++) {
    const res = await send(i);
    if (res.status === 429) {
      expect(i, 'the first request is within the limit').toBeGreaterThan(0);
      expect(res.headers.get('retry-after')).toBe('60');
      return res;
    }
  }
  throw new Error(`no 429 in ${2 * TIGHT + 1} requests`);
};
const expectThrottled = async (res: Response) => expectError(res, 429, { message: 'Retry later' });
const expectEndpointThrottled = async (res: Response) =>
  expectError(res, 429, { message: 'This endpoint has been requested too many times. Try again later.' });
const address = () => `192.0.2.${Math.floor(Math.random() * 250)}`;

describe('per client address: sign-in, sign-up and the token endpoint (GitLab protected paths)', () => {
  const browserOn = (from: string) => {
    const browser = new Browser();
    browser.fetcher = tight('LIMIT_PROTECTED_PATHS');
    return { browser, headers: { 'CF-Connecting-IP': from } };
  };

  it('throttles sign-in attempts from one address, whichever usernames they try, with a page', async () => {
    const from = address();
    const { browser, headers } = browserOn(from);
    const csrf = Browser.csrf(await (await browser.get('/users/sign_in')).text());
    const refused = await untilLimited(() => browser.post('/users/sign_in', { username: unique('guess'), password: 'guess-password', authenticity_token: csrf }, headers));
    expect(refused.headers.get('content-type')).toMatch(/^text\/html/);
    expect(await refused.text()).toContain('Too many sign-in or sign-up attempts from your address');
    const elsewhere = browserOn(`${from}0`);
    const other = Browser.csrf(await (await elsewhere.browser.get('/users/sign_in')).text());
    expect((await elsewhere.browser.post('/users/sign_in', { username: unique('guess'), password: 'x-password', authenticity_token: other }, elsewhere.headers)).status).toBe(401);
  });

  it('throttles sign-ups from one address, so taken usernames cannot be listed quickly', async () => {
    const { browser, headers } = browserOn(address());
    const csrf = Browser.csrf(await (await browser.get('/users/sign_up')).text());
    const refused = await untilLimited(() => browser.post('/users/sign_up', { name: 'Probe', username: unique('probe'), password: 'a-good-password', authenticity_token: csrf }, headers));
    expect(refused.status).toBe(429);
  });

  it('throttles the token endpoint per address, answering GitLab\'s "Retry later"', async () => {
    const send = tight('LIMIT_PROTECTED_PATHS');
    const from = { 'CF-Connecting-IP': address() };
    const refused = await untilLimited(() => send('/login/oauth/access_token', json({ client_id: 'nobody', code: 'x' }, from)));
    await expectThrottled(refused);
  });
});

describe('the device authorization grant (RFC 8628)', () => {
  const form = (fields: Record<string, string>, from: string): RequestInit => ({
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded', 'CF-Connecting-IP': from },
    body: new URLSearchParams(fields).toString(),
  });

  it('limits starting device authorizations per address, and counts the polls of a device apart from them', async () => {
    const send = tight('LIMIT_PROTECTED_PATHS');
    const cli = await registerApp({ confidential: false });
    const from = address();
    const refused = await untilLimited(() => send('/oauth/authorize_device', form({ client_id: cli.clientId }, from)));
    await expectThrottled(refused);
    const started = (await (await app.fetch(new Request(`${ORIGIN}/oauth/authorize_device`, form({ client_id: cli.clientId }, address())), env, createExecutionContext())).json()) as {
      device_code: string;
    };
    for (let i = 0; i < 2 * TIGHT + 1; i++) {
      const poll = await send('/oauth/token', form({ client_id: cli.clientId, grant_type: 'urn:ietf:params:oauth:grant-type:device_code', device_code: started.device_code }, from));
      expect(poll.status, `poll ${i}`).toBe(400);
    }
    const polls = tight('LIMIT_DEVICE_POLLS');
    const device = address();
    const poll = () => polls('/oauth/token', form({ client_id: cli.clientId, grant_type: 'urn:ietf:params:oauth:grant-type:device_code', device_code: started.device_code }, device));
    await expectThrottled(await untilLimited(poll));
  });

  it("limits the codes one user enters on /oauth/device (guesses), with a page, and only that user's", async () => {
    const guesser = new Browser();
    guesser.fetcher = tight('LIMIT_DEVICE_USER_CODES');
    const user = await createUser('guess');
    expect((await guesser.signIn(user)).status).toBe(303);
    const csrf = Browser.csrf(await (await guesser.get('/oauth/device')).text());
    const refused = await untilLimited(() => guesser.post('/oauth/device', { user_code: 'BCDF-GHJK', authenticity_token: csrf }));
    expect(refused.headers.get('content-type')).toMatch(/^text\/html/);
    expect(await refused.text()).toContain('Too many codes');
    const other = new Browser();
    other.fetcher = guesser.fetcher;
    expect((await other.signIn(await createUser('calm'))).status).toBe(303);
    const mine = Browser.csrf(await (await other.get('/oauth/device')).text());
    expect((await other.post('/oauth/device', { user_code: 'BCDF-GHJK', authenticity_token: mine })).status).toBe(404);
  });
});

describe('per confidential client: the token endpoint', () => {
  it('counts the authenticated requests of a confidential client, from any address; a public client only per address', async () => {
    const send = tight('LIMIT_OAUTH_CLIENT');
    const app = await registerApp();
    const asClient = () => json({ client_id: app.clientId, client_secret: app.secret!, grant_type: 'refresh_token', refresh_token: 'knock_rt_1_none' }, { 'CF-Connecting-IP': address() });
    await expectThrottled(await untilLimited(() => send('/login/oauth/access_token', asClient())));
    // Another client has its own count.
    const other = await registerApp();
    expect((await send('/login/oauth/access_token', json({ client_id: other.clientId, client_secret: other.secret!, code: 'x' }))).status).toBe(400);
    const spa = await registerApp({ confidential: false });
    for (let i = 0; i < 2 * TIGHT + 1; i++) {
      expect((await send('/login/oauth/access_token', json({ client_id: spa.clientId, code: 'x' }))).status).toBe(400);
    }
  });
});

describe('per token: /api/v4 (GitLab authenticated API limit)', () => {
  it("counts each token's calls; another token, and the operator's ADMIN_TOKEN, are not held back", async () => {
    const send = tight('LIMIT_API');
    const alice = await person('alice');
    await expectThrottled(await untilLimited(() => send('/api/v4/user', { headers: alice.headers })));
    const bob = await person('bob');
    expect((await send('/api/v4/user', { headers: bob.headers })).status).toBe(200);
    for (let i = 0; i < 2 * TIGHT + 1; i++) expect((await send('/api/v4/version', { headers: { 'PRIVATE-TOKEN': 'test-admin-token' } })).status).toBe(200);
  });

  it('counts an inbox poll the OAuth token’s own User object answers 304, without the token store', async () => {
    const send = tight('LIMIT_API');
    const app = await registerApp({ scopes: 'api' });
    const { browser } = await signedIn('poll');
    const tokens = await exchange(app, (await authorizeCode(browser, app)).code);
    const headers = { Authorization: `Bearer ${tokens.access_token}` };
    const first = await call('/api/v4/access_requests', { headers });
    expect(first.status).toBe(200);
    const poll = { ...headers, 'If-None-Match': first.headers.get('etag') ?? '' };
    expect((await send('/api/v4/access_requests', { headers: poll })).status).toBe(304);
    await expectThrottled(await untilLimited(() => send('/api/v4/access_requests', { headers: poll })));
  });
});

describe('per requester: new access requests', () => {
  it("stops one user's flood of requests, and only theirs", async () => {
    const send = tight('LIMIT_ACCESS_REQUESTS');
    const owner = await person('own');
    const projects = await Promise.all(Array.from({ length: 2 * TIGHT + 1 }, () => createSource('projects', owner)));
    const spammer = await person('spam');
    const refused = await untilLimited((i) => send(`/api/v4/projects/${projects[i].id}/access_requests`, { method: 'POST', headers: spammer.headers }));
    await expectEndpointThrottled(refused);
    const other = await person('calm');
    expect((await send(`/api/v4/projects/${projects[0].id}/access_requests`, { method: 'POST', headers: other.headers })).status).toBe(201);
  });
});

describe('per hook: POST …/hooks/:id/test', () => {
  it('limits the tests of one hook, counted only for those who may test it', async () => {
    const send = tight('LIMIT_HOOK_TESTS');
    const owner = await person('own');
    const project = await createSource('projects', owner);
    const hookOf = async () => {
      const res = await send(`/api/v4/projects/${project.id}/hooks`, json({ url: 'https://hooks.example.com/limited' }, owner.headers));
      return ((await res.json()) as { id: number }).id;
    };
    const [hook, another] = [await hookOf(), await hookOf()];
    const receiver = new Receiver();
    // A stranger who can see the project is refused, and uses up nothing.
    const stranger = await person('stranger');
    for (let i = 0; i < 2 * TIGHT + 1; i++) {
      expect((await send(`/api/v4/projects/${project.id}/hooks/${hook}/test`, { method: 'POST', headers: stranger.headers })).status).toBe(403);
    }
    await expectEndpointThrottled(await untilLimited(() => send(`/api/v4/projects/${project.id}/hooks/${hook}/test`, { method: 'POST', headers: owner.headers })));
    expect((await send(`/api/v4/projects/${project.id}/hooks/${another}/test`, { method: 'POST', headers: owner.headers })).status).toBe(201);
    expect(receiver.received.length).toBeLessThanOrEqual(2 * TIGHT + 1);
  });
});
