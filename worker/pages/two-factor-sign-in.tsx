import { Hono, type Context, type MiddlewareHandler } from 'hono';
import type { Child } from 'hono/jsx';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import { generateAuthenticationOptions, type AuthenticationResponseJSON, type PublicKeyCredentialRequestOptionsJSON } from '@simplewebauthn/server';
import { fromBase64url, keyedHash, safeEqual } from '../auth/crypto';
import { cookieOptions, csrfTokenFor, forgetSecondStep, safeReturnTo, secondStepOf, sessionForSecondStep } from '../auth/session';
import { clock } from '../clock';
import { tokenHashKey } from '../store/tokens';
import type { PageEnv } from '../auth/session';
import { SECOND_STEP_SECONDS, type SecondFactorProof } from '../durable/user/two-factor';
import { relyingParty, twoFactorOf } from '../services/two-factor';
import { formCsrf } from './form-csrf';
import { CsrfField, ErrorNotice, Layout } from './layout';

/** Where the second step of a sign-in is answered (GitLab asks at its sign-in address too). */
export const SECOND_STEP_PATH = '/users/two_factor';

/** The hidden form a passkey answers through (pages/webauthn-script.ts). */
export const PasskeyForm = (p: { action: string; csrf: string; mode: 'create' | 'get'; options: unknown; label: string; children?: Child }) => (
  <form method="post" action={p.action} data-webauthn={p.mode} data-options={JSON.stringify(p.options)}>
    <CsrfField token={p.csrf} />
    <input type="hidden" name="credential" value="" />
    {p.children}
    <p class="muted" data-webauthn-status role="status"></p>
    <button class="primary" type="submit">
      {p.label}
    </button>
  </form>
);

const SecondStepPage = (p: { csrf: string; totp: boolean; passkey: PublicKeyCredentialRequestOptionsJSON | null; error?: string | null }) => (
  <Layout title="Two-factor authentication">
    <div class="card">
      <h1>Two-factor authentication</h1>
      <ErrorNotice message={p.error} />
      {p.passkey ? (
        <>
          <p>Use a passkey you registered for this account.</p>
          <PasskeyForm action={SECOND_STEP_PATH} csrf={p.csrf} mode="get" options={p.passkey} label="Use a passkey" />
        </>
      ) : null}
      <form method="post" action={SECOND_STEP_PATH}>
        <CsrfField token={p.csrf} />
        <label for="otp_attempt">{p.totp ? 'Enter the code from your authenticator app, or a recovery code' : 'Or enter a recovery code'}</label>
        <input type="text" id="otp_attempt" name="otp_attempt" autocomplete="one-time-code" required autofocus={!p.passkey} />
        <div class="actions stretch">
          <button type="submit">Verify code</button>
        </div>
      </form>
    </div>
    <script src="/assets/webauthn.js" defer></script>
  </Layout>
);

const WORDS = {
  invalid: 'Invalid two-factor code.',
  expired: 'Your sign-in took too long or had too many wrong codes. Sign in again.',
  inactive: 'Your account can no longer sign in. Contact your administrator.',
} as const;

/**
 * A passkey's answer as a form carries it (the `credential` field: Web Authentication Level 3's
 * JSON, at most 64 KB), if it has `field` in its `response` (`signature` for a sign-in,
 * `attestationObject` for a registration); null otherwise. The library checks the rest.
 */
export const credentialOf = <T extends { id: string; response: object }>(value: unknown, field: string): T | null => {
  if (typeof value !== 'string' || value.length > 65_536) return null;
  try {
    const parsed = JSON.parse(value) as T;
    return typeof parsed?.id === 'string' && typeof (parsed.response as Record<string, unknown> | undefined)?.[field] === 'string' ? parsed : null;
  } catch {
    return null;
  }
};

/**
 * Signing in with a passkey alone (a discoverable credential, Web Authentication §6.2.2): the
 * sign-in page's challenge, kept in a cookie sealed with an HMAC under TOKEN_HASH_KEY until it
 * expires, since no user is known yet; the user's object spends it once.
 */
export const PASSKEY_SIGN_IN_PATH = '/users/passkey_sign_in';
const CHALLENGE_COOKIE = 'knock_passkey_challenge';
const challengeMac = (env: PageEnv['Bindings'], value: string) => keyedHash(tokenHashKey(env), `passkey-challenge:${value}`);

/** The options of the sign-in page's passkey button; its challenge goes in this browser's cookie. */
export const passkeySignInOptions = async <E extends PageEnv>(c: Context<E>): Promise<PublicKeyCredentialRequestOptionsJSON> => {
  const options = await generateAuthenticationOptions({ rpID: relyingParty(c.env, c.req.url).id, userVerification: 'required' });
  const value = `${options.challenge}.${clock.now() + SECOND_STEP_SECONDS * 1000}`;
  setCookie(c, CHALLENGE_COOKIE, `${value}.${await challengeMac(c.env, value)}`, cookieOptions(c, SECOND_STEP_SECONDS));
  return options;
};

/** This browser's sign-in challenge and until when it holds (ms), if its seal is right. */
const signInChallenge = async <E extends PageEnv>(c: Context<E>): Promise<{ challenge: string; expiresAt: number } | null> => {
  const [challenge, expires, mac] = (getCookie(c, CHALLENGE_COOKIE) ?? '').split('.');
  if (!challenge || !expires || !mac || !safeEqual(mac, await challengeMac(c.env, `${challenge}.${expires}`))) return null;
  return { challenge, expiresAt: Number(expires) };
};

/** The user a discoverable credential names (its user handle is the user's id, as registration set it). */
const userOfHandle = (handle: string | undefined): number | null => {
  try {
    const id = handle ? new TextDecoder().decode(fromBase64url(handle)) : '';
    return /^[1-9][0-9]{0,15}$/.test(id) ? Number(id) : null;
  } catch {
    return null;
  }
};

/**
 * The second step of a sign-in (durable/user/two-factor.ts): after the password, a code from an
 * authenticator app (RFC 6238), a recovery code, or a passkey (Web Authentication). `perAddress`
 * is the sign-in form's rate limit; each step also ends after five wrong codes.
 */
export const secondStepPages = (perAddress: MiddlewareHandler<PageEnv>) =>
  new Hono<PageEnv>()
    .get(SECOND_STEP_PATH, async (c) => {
      const step = await secondStepOf(c);
      const factors = step && twoFactorOf(c.env, step.userId);
      const waiting = step && factors ? await factors.secondStep(step.stepHash) : null;
      if (!step || !factors || !waiting) {
        forgetSecondStep(c);
        return c.redirect('/users/sign_in', 302);
      }
      c.header('Cache-Control', 'no-store');
      const passkey = waiting.passkeys ? await factors.passkeyOptions(step.stepHash, relyingParty(c.env, c.req.url)) : null;
      return c.html(<SecondStepPage csrf={csrfTokenFor(c)} totp={waiting.totp} passkey={passkey} />);
    })
    .post(SECOND_STEP_PATH, perAddress, formCsrf(), async (c) => {
      const step = await secondStepOf(c);
      const form = c.var.form;
      const code = typeof form.otp_attempt === 'string' ? form.otp_attempt.trim().slice(0, 64) : '';
      const passkey = credentialOf<AuthenticationResponseJSON>(form.credential, 'signature');
      if (!step || (!code && !passkey)) return c.redirect(step ? SECOND_STEP_PATH : '/users/sign_in', 303);
      const proof: SecondFactorProof = passkey ? { passkey, rp: relyingParty(c.env, c.req.url) } : { code };
      const session = await sessionForSecondStep(c, step.userId);
      const factors = twoFactorOf(c.env, step.userId);
      const result = await factors.completeSecondStep(step.stepHash, proof, session.facts);
      if (result.signedIn) {
        session.signedIn();
        return c.redirect(result.returnTo, 303);
      }
      const waiting = result.problem === 'invalid' ? await factors.secondStep(step.stepHash) : null;
      if (!waiting) {
        forgetSecondStep(c);
        return c.html(<SecondStepPage csrf={csrfTokenFor(c)} totp={false} passkey={null} error={WORDS[result.problem === 'invalid' ? 'expired' : result.problem]} />, 401);
      }
      const options = waiting.passkeys ? await factors.passkeyOptions(step.stepHash, relyingParty(c.env, c.req.url)) : null;
      return c.html(<SecondStepPage csrf={csrfTokenFor(c)} totp={waiting.totp} passkey={options} error={WORDS.invalid} />, 401);
    })
    .post(PASSKEY_SIGN_IN_PATH, perAddress, formCsrf(), async (c) => {
      const credential = credentialOf<AuthenticationResponseJSON>(c.var.form.credential, 'signature');
      const challenge = await signInChallenge(c);
      const userId = userOfHandle(credential?.response.userHandle);
      deleteCookie(c, CHALLENGE_COOKIE, { path: '/' });
      const refused = () => c.redirect('/users/sign_in?passkey=refused', 303);
      if (!credential || !challenge || userId === null) return refused();
      const session = await sessionForSecondStep(c, userId);
      const result = await twoFactorOf(c.env, userId).signInWithPasskey(credential, relyingParty(c.env, c.req.url), challenge.challenge, challenge.expiresAt, session.facts);
      if (!result.signedIn) return refused();
      session.signedIn();
      return c.redirect(safeReturnTo(c.var.form.return_to), 303);
    });
