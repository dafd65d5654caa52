import { runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { beforeAll, describe, expect, it } from 'vitest';
import { hashSecret } from '../../worker/store/tokens';
import { ADMIN, Browser, call, createUser, jsonBody, type TestUser } from './support/http';

/**
 * Browser sessions live in each user's grant authority, named by the cookie (`<user id>.<random>`).
 * Sessions started before that move stay in the Directory and keep working until they expire.
 */

const directory = () => env.DIRECTORY.getByName('directory');

/** A session as the previous version stored it: a Directory row under the cookie's keyed hash. */
const legacySession = async (user: TestUser) => {
  const cookie = `legacy${crypto.randomUUID().replace(/-/g, '')}`;
  const idHash = await hashSecret(env, cookie);
  await runInDurableObject(directory(), (_instance, state) => {
    state.storage.sql.exec(
      'INSERT INTO sessions (id_hash, user_id, csrf_token, created_at, expires_at) VALUES (?, ?, ?, ?, ?)',
      idHash,
      user.id,
      'legacy-csrf-token-of-the-session',
      new Date().toISOString(),
      Date.now() + 3600_000,
    );
  });
  const browser = new Browser();
  browser.cookies.set('knock_session', cookie);
  return { browser, idHash };
};

const profile = async (browser: Browser) => {
  const res = await browser.get('/-/profile');
  return { status: res.status, html: await res.text() };
};

describe('browser sessions', () => {
  let user: TestUser;
  beforeAll(async () => {
    user = await createUser('sess');
  }, 30_000);

  it('names its user in the cookie and is found only in that user\'s object', async () => {
    const browser = new Browser();
    expect((await browser.signIn(user)).status).toBe(303);
    const cookie = browser.cookies.get('knock_session') ?? '';
    expect(cookie.startsWith(`${user.id}.`)).toBe(true);
    expect(await profile(browser)).toMatchObject({ status: 200, html: expect.stringContaining(user.username) });

    const other = await createUser('sess');
    const forged = new Browser();
    forged.cookies.set('knock_session', `${other.id}.${cookie.slice(cookie.indexOf('.') + 1)}`);
    expect((await profile(forged)).status).toBe(302);
  });

  it('keeps a session the previous version started in the Directory, until sign-out', async () => {
    const { browser, idHash } = await legacySession(user);
    const page = await profile(browser);
    expect(page).toMatchObject({ status: 200, html: expect.stringContaining(user.username) });
    const out = await browser.post('/users/sign_out', { authenticity_token: Browser.csrf(page.html) });
    expect(out.status).toBe(303);
    expect(await directory().getSession(idHash)).toBeNull();
    expect((await profile(browser)).status).toBe(302);
  });

  it('ends both kinds of session when the user is blocked, and signing out everywhere ends both', async () => {
    const blocked = await createUser('sess');
    const fresh = new Browser();
    expect((await fresh.signIn(blocked)).status).toBe(303);
    const { browser: old } = await legacySession(blocked);
    expect((await call(`/api/v4/users/${blocked.id}/block`, jsonBody({}, ADMIN))).status).toBe(201);
    expect((await profile(fresh)).status).toBe(302);
    expect((await profile(old)).status).toBe(302);

    const leaving = await createUser('sess');
    const here = new Browser();
    expect((await here.signIn(leaving)).status).toBe(303);
    const { browser: there } = await legacySession(leaving);
    const page = await profile(here);
    expect((await here.post('/-/profile/sign_out_everywhere', { authenticity_token: Browser.csrf(page.html) })).status).toBe(303);
    expect((await profile(here)).status).toBe(302);
    expect((await profile(there)).status).toBe(302);
  });
});
