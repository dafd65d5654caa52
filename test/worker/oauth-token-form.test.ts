// Form-encoded token requests (RFC 6749 §3.2, application/x-www-form-urlencoded), read without
// FormData: percent-encoding and '+' decode as in any form, a parameter sent twice is refused.
import { describe, expect, it, vi } from 'vitest';
import { authorizeCode, call, exchange, registerApp, signedIn, type Tokens } from './support/oauth';

const post = (body: string) =>
  call('/login/oauth/access_token', { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded; charset=UTF-8' }, body });

const grant = async () => {
  const app = await registerApp();
  const { browser } = await signedIn();
  return { app, tokens: await exchange(app, (await authorizeCode(browser, app)).code) };
};

const encodeAll = (s: string) => [...new TextEncoder().encode(s)].map((b) => `%${b.toString(16).padStart(2, '0').toUpperCase()}`).join('');

describe('a form-encoded refresh', () => {
  it('decodes percent-encoded values and ignores unknown parameters', async () => {
    const { app, tokens } = await grant();
    const body = `grant_type=refresh_token&client_id=${encodeAll(app.clientId)}&client_secret=${encodeAll(app.secret!)}&refresh_token=${encodeAll(tokens.refresh_token)}&extra%5B%5D=1&note=a+b`;
    const res = await post(body);
    expect(res.status, await res.clone().text()).toBe(200);
    const next = (await res.json()) as Tokens;
    expect(next.refresh_token).not.toBe(tokens.refresh_token);
  });

  it('refuses a parameter sent twice, and changes nothing', async () => {
    const { app, tokens } = await grant();
    const fields = `grant_type=refresh_token&client_id=${app.clientId}&client_secret=${app.secret}`;
    const res = await post(`${fields}&refresh_token=${tokens.refresh_token}&refresh_token=${tokens.refresh_token}`);
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ error: 'invalid_request', error_description: 'refresh_token was sent more than once.' });
    expect((await post(`${fields}&refresh_token=${tokens.refresh_token}`)).status).toBe(200);
  });

  it('treats an empty value as absent', async () => {
    const { app } = await grant();
    const res = await post(`grant_type=refresh_token&client_id=${app.clientId}&client_secret=${app.secret}&refresh_token=`);
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ error: 'invalid_request', error_description: 'refresh_token is missing.' });
  });
});
