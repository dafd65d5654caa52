import { Hono, type Context } from 'hono';
import type { PublicKeyCredentialCreationOptionsJSON, RegistrationResponseJSON } from '@simplewebauthn/server';
import { clientAddress } from '../edge/client-address';
import type { TwoFactorStatus } from '../durable/user/two-factor';
import { checkPassword } from '../services/accounts';
import { relyingParty, twoFactorOf, twoFactorRequirement } from '../services/two-factor';
import { act, formText } from './actions';
import { alertFor, FlashNotice, PostForm, Section, When } from './components';
import { setFlash, takeFlash, type Flash } from './flash';
import { formCsrf } from './form-csrf';
import { ErrorNotice, Layout } from './layout';
import { credentialOf, PasskeyForm } from './two-factor-sign-in';
import type { ConsoleEnv } from './viewer';

/** GitLab's address of the page (User settings → Account → Two-factor authentication). */
const TWO_FACTOR_PATH = '/-/profile/two_factor_auth';
const FORM = 'two-factor';

interface TwoFactorView {
  status: TwoFactorStatus;
  totp: { secret: string; uri: string } | null;
  registration: PublicKeyCredentialCreationOptionsJSON;
  flash: Flash;
  /** Recovery codes just made: shown on this answer only. */
  recoveryCodes?: string[] | null;
}

const RecoveryCodes = (p: { codes: string[] }) => (
  <Section id="recovery-codes" title="Recovery codes">
    <p>
      <strong>Save these codes now: they are shown only this once.</strong> Each signs you in once if you lose your authenticator app or passkey.
    </p>
    <ul class="codes" aria-label="Recovery codes">
      {p.codes.map((code) => (
        <li>
          <code>{code}</code>
        </li>
      ))}
    </ul>
  </Section>
);

const TotpSection = (p: { csrf: string; view: TwoFactorView }) => {
  const { status, totp } = p.view;
  return (
    <Section id="totp" title="Authenticator app">
      {status.totp === 'on' ? (
        <p>An authenticator app gives your codes.</p>
      ) : totp ? (
        <>
          <p>Add this key to an authenticator app (any app for time-based one-time passwords, RFC 6238), then enter the code it shows.</p>
          <dl class="facts">
            <dt>Key</dt>
            <dd>
              <code id="totp-secret">{totp.secret}</code>
            </dd>
            <dt>Link</dt>
            <dd>
              <a href={totp.uri}>{totp.uri}</a>
            </dd>
          </dl>
          <PostForm action={TWO_FACTOR_PATH} csrf={p.csrf}>
            <label for="pin_code">Code from the app</label>
            <input type="text" id="pin_code" name="pin_code" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9 ]{6,7}" required />
            <button class="primary" type="submit">
              Register with two-factor app
            </button>
          </PostForm>
        </>
      ) : null}
    </Section>
  );
};

const PasskeySection = (p: { csrf: string; view: TwoFactorView }) => {
  const { status, registration } = p.view;
    return (
    <Section id="passkeys" title={`Passkeys (${status.passkeys.length})`}>
      {status.passkeys.length > 0 ? (
        <table>
          <caption>Your passkeys</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Added</th>
              <th scope="col">Last used</th>
              <th scope="col">
                <span class="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {status.passkeys.map((k) => (
              <tr>
                <td>{k.name}</td>
                <td>
                  <When iso={k.createdAt} />
                </td>
                <td>{k.lastUsedAt ? <When iso={k.lastUsedAt} /> : 'never'}</td>
                <td>
                  <PostForm action={`${TWO_FACTOR_PATH}/passkeys/delete`} csrf={p.csrf} label={`Delete ${k.name}`}>
                    <input type="hidden" name="credential_id" value={k.id} />
                    <button class="danger" type="submit">
                      Delete
                    </button>
                  </PostForm>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : (
        <p class="muted">No passkey yet. A passkey signs you in with this device's screen lock or a security key.</p>
      )}
      <PasskeyForm action={`${TWO_FACTOR_PATH}/passkeys`} csrf={p.csrf} mode="create" options={registration} label="Register passkey">
        <label for="passkey_name">Name of the passkey</label>
        <input type="text" id="passkey_name" name="name" maxlength={64} required />
      </PasskeyForm>
    </Section>
  );
};

const ManageSection = (p: { csrf: string; view: TwoFactorView }) => {
    if (!p.view.status.enabled) return null;
  return (
    <Section id="manage" title="Recovery codes and turning it off">
      <p>{p.view.status.recoveryCodesLeft} recovery codes left. Both actions need your password.</p>
      <PostForm action={`${TWO_FACTOR_PATH}/codes`} csrf={p.csrf} label="Regenerate recovery codes">
        <label for="codes_password">Password</label>
        <input type="password" id="codes_password" name="current_password" autocomplete="current-password" required />
        <button type="submit">Regenerate recovery codes</button>
      </PostForm>
      <PostForm action={`${TWO_FACTOR_PATH}/disable`} csrf={p.csrf} label="Disable two-factor authentication">
        <label for="disable_password">Password</label>
        <input type="password" id="disable_password" name="current_password" autocomplete="current-password" required />
        <button class="danger" type="submit">
          Disable two-factor authentication
        </button>
      </PostForm>
    </Section>
  );
};

const twoFactorPage = async <E extends ConsoleEnv>(c: Context<E>, flash: Flash, recoveryCodes: string[] | null = null, status: 200 | 201 = 200) => {
  const { user, csrf } = c.var.viewer;
  const factors = twoFactorOf(c.env, user.id);
  const rp = relyingParty(c.env, c.req.url);
  const [state, totp, registration, required] = await Promise.all([
    factors.status(),
    factors.totpEnrolment(user.username, rp.name),
    factors.registrationOptions(user, rp),
    c.var.session ? twoFactorRequirement(c.env, c.var.session) : null,
  ]);
  const view: TwoFactorView = { status: state, totp, registration, flash, recoveryCodes };
  const alert = alertFor(flash, FORM);
  c.header('Cache-Control', 'no-store');
  return c.html(
    <Layout title="Two-factor authentication" viewer={c.var.viewer} current="/-/profile" wide>
      <h1>Two-factor authentication</h1>
      <FlashNotice flash={flash} />
      <ErrorNotice message={alert?.message ?? (state.enabled ? null : required)} />
      <p>{state.enabled ? 'Two-factor authentication is on for your account.' : 'Two-factor authentication is off: a password alone signs you in.'}</p>
      {recoveryCodes ? <RecoveryCodes codes={recoveryCodes} /> : null}
      <TotpSection csrf={csrf} view={view} />
      <PasskeySection csrf={csrf} view={view} />
      <ManageSection csrf={csrf} view={view} />
      <script src="/assets/webauthn.js" defer></script>
    </Layout>,
    status,
  );
};

/** A failed step of the page: its message beside the page's forms, back at the page (POST-redirect-GET). */
const refuse = async <E extends ConsoleEnv>(c: Context<E>, message: string) => {
  await setFlash(c, { alert: { form: FORM, message } });
  return c.redirect(TWO_FACTOR_PATH, 303);
};

/** Whether the viewer typed their password (the sign-in's throttles count it). */
const passwordConfirms = async <E extends ConsoleEnv>(c: Context<E>, password: string) => {
  const check = await checkPassword(c.env, c.var.viewer.user.username, password, clientAddress(c));
  return 'user' in check && check.user?.id === c.var.viewer.user.id;
};

/** `/-/profile/two_factor_auth`: the viewer's second factor (GitLab's `Profiles::TwoFactorAuthsController`). */
export const twoFactorSettingsPages = new Hono<ConsoleEnv>()
  .get(TWO_FACTOR_PATH, async (c) => twoFactorPage(c, await takeFlash(c)))
  // Confirms the app's code; the recovery codes are on this answer only.
  .post(TWO_FACTOR_PATH, formCsrf(), async (c) => {
    const confirmed = await twoFactorOf(c.env, c.var.viewer.user.id).confirmTotp(formText(c.var.form, 'pin_code'));
    if (!confirmed.ok) return refuse(c, 'Invalid pin code.');
    return twoFactorPage(c, { notice: 'You have set up two-factor authentication with an authenticator app.' }, confirmed.recoveryCodes, 201);
  })
  .post(`${TWO_FACTOR_PATH}/passkeys`, formCsrf(), async (c) => {
    const name = formText(c.var.form, 'name').trim().slice(0, 64);
    const response = credentialOf<RegistrationResponseJSON>(c.var.form.credential, 'attestationObject');
    if (!name || !response) return refuse(c, 'Name the passkey and let your browser make it.');
    const added = await twoFactorOf(c.env, c.var.viewer.user.id).registerPasskey(name, response, relyingParty(c.env, c.req.url));
    if (!added.ok) return refuse(c, 'The passkey could not be registered. Try again.');
    return twoFactorPage(c, { notice: `Registered the passkey ${name}.` }, added.recoveryCodes, 201);
  })
  .post(`${TWO_FACTOR_PATH}/passkeys/delete`, formCsrf(), async (c) =>
    act(c, { form: FORM, returnTo: TWO_FACTOR_PATH }, async () => {
      const deleted = await twoFactorOf(c.env, c.var.viewer.user.id).deletePasskey(formText(c.var.form, 'credential_id'));
      return deleted ? 'Deleted the passkey.' : 'That passkey was already deleted.';
    }),
  )
  .post(`${TWO_FACTOR_PATH}/codes`, formCsrf(), async (c) => {
    if (!(await passwordConfirms(c, formText(c.var.form, 'current_password')))) return refuse(c, 'You must provide a valid current password.');
    const codes = await twoFactorOf(c.env, c.var.viewer.user.id).regenerateRecoveryCodes();
    if (!codes) return refuse(c, 'Two-factor authentication is not enabled for your account.');
    return twoFactorPage(c, { notice: 'New recovery codes: the old ones no longer work.' }, codes, 201);
  })
  .post(`${TWO_FACTOR_PATH}/disable`, formCsrf(), async (c) => {
    if (!(await passwordConfirms(c, formText(c.var.form, 'current_password')))) return refuse(c, 'You must provide a valid current password.');
    await twoFactorOf(c.env, c.var.viewer.user.id).disable();
    await setFlash(c, { notice: 'Two-factor authentication has been disabled for your account.' });
    return c.redirect(TWO_FACTOR_PATH, 303);
  });
