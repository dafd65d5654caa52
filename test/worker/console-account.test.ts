// My account: the profile, the way to authorized applications, and signing out everywhere.
import { beforeAll, describe, expect, it } from 'vitest';
import { startWorker } from './support/namespaces';
import { consoleSession, consoleUser, textOf } from './support/console';

beforeAll(startWorker, 30_000);

describe('my account', () => {
  it('shows the profile and links to authorized applications', async () => {
    const me = await consoleUser('me');
    const { browser } = await consoleSession(me);
    const html = await (await browser.get('/-/profile')).text();
    expect(textOf(html)).toContain(`@${me.username}`);
    expect(html).toContain('href="/oauth/authorized_applications"');
  });

  it('signs out everywhere: every session of the user ends, no other user is touched', async () => {
    const [me, other] = [await consoleUser('me'), await consoleUser('oth')];
    const here = await consoleSession(me);
    const there = await consoleSession(me);
    const someoneElse = await consoleSession(other);
    const res = await here.browser.post('/-/profile/sign_out_everywhere', { authenticity_token: here.csrf });
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/users/sign_in');
    for (const b of [here.browser, there.browser]) expect((await b.get('/')).status).toBe(302);
    expect((await someoneElse.browser.get('/')).status).toBe(200);
  });

  it('refuses a forged sign-out-everywhere', async () => {
    const me = await consoleUser('me');
    const { browser } = await consoleSession(me);
    expect((await browser.post('/-/profile/sign_out_everywhere', { authenticity_token: 'A'.repeat(32) })).status).toBe(403);
    expect((await browser.get('/')).status).toBe(200);
  });
});
