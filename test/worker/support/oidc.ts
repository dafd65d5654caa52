// Helpers for the OpenID Connect tests: an application registered with `openid`, sign-in through
// the real pages, and id_tokens verified with jose against the JWKS the Worker publishes.
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify, type JSONWebKeySet, type JWTPayload } from 'jose';
import { expect } from 'vitest';
import { clock } from '../../../worker/clock';
import { call, ORIGIN } from './http';
import { authorizeCode, exchange, refresh, registerApp, type App, type Tokens } from './oauth';
import type { Browser } from './oauth';

export const OPENID_SCOPES = 'openid profile email api';

/** An application that may ask for OpenID Connect's scopes. */
export const openidApp = (opts: { confidential?: boolean; scopes?: string } = {}) => registerApp({ scopes: OPENID_SCOPES, ...opts });

export interface OidcTokens extends Tokens {
  id_token?: string;
}

/** The JWKS as a relying party fetches it. */
export const fetchJwks = async (): Promise<JSONWebKeySet> => {
  const res = await call('/oauth/discovery/keys');
  expect(res.status).toBe(200);
  return (await res.json()) as JSONWebKeySet;
};

/** Verifies an id_token as a relying party does: RS256, the key its `kid` names in the JWKS, issuer, audience, lifetime (at the Worker's clock). */
export const verifyIdToken = async (idToken: string, app: App, jwks?: JSONWebKeySet): Promise<{ payload: JWTPayload & Record<string, unknown>; kid: string }> => {
  const set = createLocalJWKSet(jwks ?? (await fetchJwks()));
  const { payload, protectedHeader } = await jwtVerify(idToken, set, {
    issuer: ORIGIN,
    audience: app.clientId,
    algorithms: ['RS256'],
    currentDate: new Date(clock.now()),
  });
  expect(protectedHeader.kid).toBe(decodeProtectedHeader(idToken).kid);
  return { payload: payload as JWTPayload & Record<string, unknown>, kid: protectedHeader.kid as string };
};

/** Authorize (consent if asked) and exchange the code, with OpenID Connect's parameters. */
export const signInWithKnock = async (browser: Browser, app: App, extra: Record<string, string | undefined> = {}): Promise<OidcTokens> => {
  const { code } = await authorizeCode(browser, app, { scope: 'openid profile email', ...extra });
  return (await exchange(app, code)) as OidcTokens;
};

export const refreshed = async (app: App, tokens: Tokens): Promise<OidcTokens> => {
  const res = await refresh(app, tokens.refresh_token);
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()) as OidcTokens;
};

export const userinfo = (token: string, method: 'GET' | 'POST' = 'GET') => call('/oauth/userinfo', { method, headers: { Authorization: `Bearer ${token}` } });

export const userinfoClaims = async (token: string): Promise<Record<string, unknown>> => {
  const res = await userinfo(token);
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()) as Record<string, unknown>;
};
