// The userinfo endpoint (OpenID Connect Core 1.0 §5.3) at GitLab's path: GET and POST with a
// Bearer token, GitLab's claims, and RFC 6750's errors.
import { beforeAll, describe, expect, it } from 'vitest';
import { advance } from './support/clock';
import { call, createUser, issueToken, ORIGIN } from './support/http';
import { admin, createGroup, startWorker } from './support/namespaces';
import { authorizeCode, exchange, signedIn, tokenCall } from './support/oauth';
import { openidApp, signInWithKnock, userinfo } from './support/oidc';

beforeAll(startWorker, 30_000);

describe('userinfo', () => {
  it('answers GET and POST with the profile, email with the email scope, and the group claims', async () => {
    const app = await openidApp();
    const { browser, user } = await signedIn('info');
    const tokens = await signInWithKnock(browser, app);
    for (const method of ['GET', 'POST'] as const) {
      const res = await userinfo(tokens.access_token, method);
      expect(res.status, method).toBe(200);
      expect(res.headers.get('Content-Type')).toBe('application/json');
      expect(res.headers.get('Cache-Control')).toBe('no-store');
      expect(await res.json(), method).toEqual({
        sub: String(user.id),
        name: `Name ${user.username}`,
        nickname: user.username,
        preferred_username: user.username,
        profile: `${ORIGIN}/${user.username}`,
        email: `${user.username}@example.test`,
        email_verified: false,
        groups: [],
      });
    }
    const withoutEmail = await signInWithKnock(browser, app, { scope: 'openid' });
    const claims = (await (await userinfo(withoutEmail.access_token)).json()) as Record<string, unknown>;
    expect(claims).not.toHaveProperty('email');
    expect(claims).not.toHaveProperty('email_verified');
  });

  it('shows the user’s rename, which the token’s record follows, and keeps the group claims it was issued with', async () => {
    const app = await openidApp();
    const { browser, user } = await signedIn('renamed');
    const headers = { 'PRIVATE-TOKEN': await issueToken(user.id, user.username, ['api']) };
    const own = await createGroup({ id: user.id, username: user.username, name: `Name ${user.username}`, headers });
    const tokens = await signInWithKnock(browser, app);
    expect((await admin.put(`/users/${user.id}`, { name: 'Robert Tables' })).status).toBe(200);
    expect(await (await userinfo(tokens.access_token)).json()).toMatchObject({
      name: 'Robert Tables',
      preferred_username: user.username,
      groups: [own.full_path],
      'https://gitlab.org/claims/groups/owner': [own.full_path],
    });
  });

  it('refuses without a token, with an unknown, revoked or expired token (401), and a token without openid (403)', async () => {
    const app = await openidApp();
    const { browser } = await signedIn('refused');

    const none = await call('/oauth/userinfo');
    expect(none.status).toBe(401);
    expect(none.headers.get('WWW-Authenticate')).toBe('Bearer realm="Knock"');
    expect(await none.json()).toMatchObject({ error: 'invalid_request' });

    const unknown = await userinfo('knock_at_zzzz_notatoken');
    expect(unknown.status).toBe(401);
    expect(unknown.headers.get('WWW-Authenticate')).toContain('error="invalid_token"');
    expect(await unknown.json()).toMatchObject({ error: 'invalid_token' });

    const plain = await exchange(app, (await authorizeCode(browser, app, { scope: 'api' })).code);
    const noOpenid = await userinfo(plain.access_token);
    expect(noOpenid.status).toBe(403);
    expect(noOpenid.headers.get('WWW-Authenticate')).toContain('error="insufficient_scope"');
    expect(await noOpenid.json()).toMatchObject({ error: 'insufficient_scope', scope: 'openid' });

    const personal = await createUser('pat');
    expect((await userinfo(personal.headers['PRIVATE-TOKEN'])).status).toBe(403);

    const revoked = await signInWithKnock(browser, app);
    expect((await tokenCall({ token: revoked.access_token }, { path: '/oauth/revoke', basic: [app.clientId, app.secret!], form: true })).status).toBe(200);
    const afterRevoke = await userinfo(revoked.access_token);
    expect(afterRevoke.status).toBe(401);
    expect(await afterRevoke.json()).toMatchObject({ error: 'invalid_token', error_description: 'Token was revoked. You have to re-authorize from the user.' });

    const expiring = await signInWithKnock(browser, app);
    advance(8 * 3600 + 1);
    const expired = await userinfo(expiring.access_token);
    expect(expired.status).toBe(401);
    expect(await expired.json()).toMatchObject({ error: 'invalid_token', error_description: 'Token is expired. You can either do re-authorization or token refresh.' });
  });

  it('stops answering once the user is blocked', async () => {
    const app = await openidApp();
    const { browser, user } = await signedIn('blocked');
    const tokens = await signInWithKnock(browser, app);
    expect((await admin.post(`/users/${user.id}/block`)).status).toBe(201);
    expect((await userinfo(tokens.access_token)).status).toBe(401);
  });
});
