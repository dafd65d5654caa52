import { beforeAll, describe, expect, it } from 'vitest';
import { recordedFetch } from './support/counted';
import { ADMIN, Browser, call, createUser, jsonBody, type TestUser } from './support/http';

/**
 * Browser sessions live in each user's `User` object, named by the cookie (`<user id>.<random>`).
 * A cookie of any other shape is no session and reaches no object.
 */

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

  it('takes a cookie without a user id for no session, without asking any object', async () => {
    const page = (cookie: string) => recordedFetch('/-/profile', { headers: { Cookie: `knock_session=${cookie}` } });
    // The isolate's first request checks the partition count once; the pages after it are measured.
    await page('warm-up');
    for (const cookie of [`legacy${crypto.randomUUID().replace(/-/g, '')}`, `.${crypto.randomUUID()}`, `0.${crypto.randomUUID()}`]) {
      const { response, calls } = await page(cookie);
      expect(response.status).toBe(302);
      expect(calls).toEqual([]);
    }
  });

  it('ends when the user is blocked, and signing out everywhere ends every browser\'s', async () => {
    const blocked = await createUser('sess');
    const fresh = new Browser();
    expect((await fresh.signIn(blocked)).status).toBe(303);
    expect((await call(`/api/v4/users/${blocked.id}/block`, jsonBody({}, ADMIN))).status).toBe(201);
    expect((await profile(fresh)).status).toBe(302);

    const leaving = await createUser('sess');
    const here = new Browser();
    const there = new Browser();
    expect((await here.signIn(leaving)).status).toBe(303);
    expect((await there.signIn(leaving)).status).toBe(303);
    const page = await profile(here);
    expect((await here.post('/-/profile/sign_out_everywhere', { authenticity_token: Browser.csrf(page.html) })).status).toBe(303);
    expect((await profile(here)).status).toBe(302);
    expect((await profile(there)).status).toBe(302);
  });
});
