import type { Context, MiddlewareHandler } from 'hono';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import type { Env } from '../env';
import type { UserRow } from '../durable/directory/types';
import { userObject } from '../durable/user/user';
import { SECOND_STEP_SECONDS } from '../durable/user/two-factor';
import { twoFactorOf } from '../services/two-factor';
import { hashSecret } from '../store/tokens';
import { randomToken, safeEqual } from './crypto';

export interface Session {
  user: UserRow;
  csrfToken: string;
  idHash: string;
  /** When the user signed in (epoch seconds): an id_token's `auth_time`. */
  signedInAt: number;
  /** For a user without a second factor, the index partitions whose groups may require one. */
  requirementPartitions: number[];
  /** How many access requests wait in the user's inbox (read with the session; the console's header). */
  waiting: number;
}

/** HTML pages: the signed-in user of the browser session, if any. */
export type PageEnv = {
  Bindings: Env;
  /** `sessionEndedBecause`: this browser's session ended when its user was blocked or deactivated (for the sign-in page to say). */
  Variables: { session: Session | null; sessionEndedBecause?: 'blocked' | 'deactivated' };
};

const SESSION_COOKIE = 'knock_session';
/** Pre-sign-in CSRF secret (double-submit), replaced by the session's own once signed in. */
const CSRF_COOKIE = 'knock_csrf';
const SESSION_TTL_SECONDS = 7 * 24 * 3600;

/** The flags of every cookie the pages set: HttpOnly, SameSite=Lax, path /, Secure on https, no Domain. */
export const cookieOptions = (c: Context, maxAge?: number) => ({
  httpOnly: true,
  sameSite: 'Lax' as const,
  secure: new URL(c.req.url).protocol === 'https:',
  path: '/',
  ...(maxAge ? { maxAge } : {}),
});

/**
 * A session cookie names its user, `<user id>.<random>`, so a page view reaches only that user's
 * `User` object, which keeps the session (under the cookie's keyed hash) and the user as the
 * Directory last pushed it. The random part is the secret. A cookie of any other shape is no
 * session, and reaches no object.
 */
const cookieOwner = (id: string): number | null => {
  const m = /^([1-9][0-9]{0,15})\./.exec(id);
  return m ? Number(m[1]) : null;
};

/** Loads the signed-in user (server-side session record) for the HTML pages. */
export const loadSession: MiddlewareHandler<PageEnv> = async (c, next) => {
  const id = getCookie(c, SESSION_COOKIE);
  let session: Session | null = null;
  if (id) {
    const owner = cookieOwner(id);
    if (owner !== null) {
      const idHash = await hashSecret(c.env, id);
      const found = await userObject(c.env, owner).getSession(idHash);
      if (found && 'user' in found) session = { ...found, idHash };
      else if (found) c.set('sessionEndedBecause', found.endedBecause);
    }
  }
  c.set('session', session);
  await next();
};

/** Ends the session; `exceptClient`: the application that asked (RP-initiated logout), not told by back-channel logout. */
const forget = (env: Env, session: Session, exceptClient: string | null = null) => userObject(env, session.user.id).deleteSession(session.idHash, exceptClient);

/** A new session's cookie value and what its user's object keeps of it. */
const newSession = async (env: Env, userId: number) => {
  const id = `${userId}.${randomToken('', 32)}`;
  return { id, facts: { idHash: await hashSecret(env, id), csrfToken: randomToken('', 24), ttlSeconds: SESSION_TTL_SECONDS } };
};

const setSessionCookie = <E extends PageEnv>(c: Context<E>, id: string) => {
  setCookie(c, SESSION_COOKIE, id, cookieOptions(c, SESSION_TTL_SECONDS));
  deleteCookie(c, CSRF_COOKIE, { path: '/' });
};

/** Signs `user` in; false when the user is no longer active (blocked while signing in). */
export const startSession = async <E extends PageEnv>(c: Context<E>, user: UserRow): Promise<boolean> => {
  if (c.var.session) await forget(c.env, c.var.session);
  const { id, facts } = await newSession(c.env, user.id);
  if (!(await userObject(c.env, user.id).createSession(user, facts.idHash, facts.csrfToken, facts.ttlSeconds))) return false;
  setSessionCookie(c, id);
  return true;
};

/**
 * A sign-in whose second step is still to come (a user with a second factor): `<user id>.<random>`
 * as the session's cookie, so it reaches only that user's object, which keeps it under its keyed
 * hash for SECOND_STEP_SECONDS (durable/user/two-factor.ts).
 */
const SECOND_STEP_COOKIE = 'knock_two_factor';

/**
 * After the password was right: signs `user` in, or, when they have a second factor, starts the
 * second step (its cookie set) that leads to `returnTo`.
 */
export const startSignIn = async <E extends PageEnv>(c: Context<E>, user: UserRow, returnTo: string): Promise<'session' | 'second-step' | 'inactive'> => {
  if (c.var.session) await forget(c.env, c.var.session);
  const [{ id, facts }, step] = await Promise.all([newSession(c.env, user.id), newSession(c.env, user.id)]);
  const outcome = await twoFactorOf(c.env, user.id).beginSignIn(user, facts, { idHash: step.facts.idHash, returnTo });
  if (outcome === 'session') setSessionCookie(c, id);
  if (outcome === 'second-step') setCookie(c, SECOND_STEP_COOKIE, step.id, cookieOptions(c, SECOND_STEP_SECONDS));
  return outcome;
};

/** This browser's waiting second step: whose it is and its keyed hash; null without one. */
export const secondStepOf = async <E extends PageEnv>(c: Context<E>): Promise<{ userId: number; stepHash: string } | null> => {
  const id = getCookie(c, SECOND_STEP_COOKIE);
  const owner = id ? cookieOwner(id) : null;
  return id && owner !== null ? { userId: owner, stepHash: await hashSecret(c.env, id) } : null;
};

/** The facts of the session a second step starts, and how to give this browser its cookie once it did. */
export const sessionForSecondStep = async <E extends PageEnv>(c: Context<E>, userId: number) => {
  const { id, facts } = await newSession(c.env, userId);
  return {
    facts,
    signedIn: () => {
      setSessionCookie(c, id);
      deleteCookie(c, SECOND_STEP_COOKIE, { path: '/' });
    },
  };
};

/** Ends the browser's second step (expired, or given up). */
export const forgetSecondStep = <E extends PageEnv>(c: Context<E>) => deleteCookie(c, SECOND_STEP_COOKIE, { path: '/' });

export const endSession = async <E extends PageEnv>(c: Context<E>, exceptClient: string | null = null): Promise<void> => {
  if (c.var.session) await forget(c.env, c.var.session, exceptClient);
  deleteCookie(c, SESSION_COOKIE, { path: '/' });
};

/** Ends every browser session of a user ("sign out everywhere"). */
export const endAllSessions = async (env: Env, userId: number): Promise<void> => {
  await userObject(env, userId).deleteSessions();
};

/** The CSRF token to embed in a form: the session's, or a fresh pre-sign-in one. */
export const csrfTokenFor = <E extends PageEnv>(c: Context<E>): string => {
  if (c.var.session) return c.var.session.csrfToken;
  let token = getCookie(c, CSRF_COOKIE);
  if (!token || token.length < 20) {
    token = randomToken('', 24);
    setCookie(c, CSRF_COOKIE, token, cookieOptions(c));
  }
  return token;
};

/** Whether a submitted form's token belongs to this browser's session. */
export const validCsrf = <E extends PageEnv>(c: Context<E>, submitted: unknown): boolean => {
  if (typeof submitted !== 'string' || !submitted) return false;
  const expected = c.var.session ? c.var.session.csrfToken : getCookie(c, CSRF_COOKIE);
  return !!expected && safeEqual(submitted, expected);
};

/**
 * A `return_to` that can only lead to a path on this origin: no scheme, no host, no `//`
 * or `/\` tricks, no control characters. Anything else becomes `fallback`.
 */
export const safeReturnTo = (value: unknown, fallback = '/'): string => {
  if (typeof value !== 'string' || !value.startsWith('/') || value.length > 2048) return fallback;
  if (/^\/[/\\]/.test(value) || /[\u0000-\u001f\\]/.test(value)) return fallback;
  try {
    const resolved = new URL(value, 'http://knock.invalid');
    return resolved.origin === 'http://knock.invalid' ? resolved.pathname + resolved.search : fallback;
  } catch {
    return fallback;
  }
};
