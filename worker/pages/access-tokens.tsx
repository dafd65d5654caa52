import type { Context } from 'hono';
import { issueTokenFor, NewAccessTokenBody } from '../api/access-tokens';
import { clock } from '../clock';
import type { AccessTokenRow } from '../durable/directory/types';
import { ApiError } from '../errors';
import { isActive } from '../api/presenters/access-token';
import { TOKEN_SCOPES } from '../oauth/scopes';
import * as tokens from '../services/access-tokens';
import { formText, parseForm } from './actions';
import { problemPage } from './error-page';
import { Confirm, DataTable, FieldError, FormError, invalid, PostForm, TextField, tomorrowUtc, When } from './components';
import type { Flash, FormAlert } from './flash';
import type { FormFields } from './form-csrf';
import { describeProblem } from './problems';
import type { ConsoleEnv, Viewer } from './viewer';

/**
 * Personal access tokens (My account) and impersonation tokens (Administration) on the console:
 * one form, one table, one "shown once" box and one revoke confirmation for both kinds, over
 * the service the API uses (`worker/services/access-tokens.ts`, `issueTokenFor`).
 */

/** A token just issued, shown on the answer to its form only (never stored, never in a cookie). */
export interface IssuedToken {
  name: string;
  token: string;
}

const day = (epochSeconds: number) => new Date(epochSeconds * 1000).toISOString().slice(0, 10);

/** The new token, once, with how to keep it. */
export const IssuedTokenBox = (p: { issued?: IssuedToken }) =>
  p.issued ? (
    <div class="secret" role="status">
      <p>
        <strong>{p.issued.name}</strong>: copy this token now and keep it somewhere safe. It will not be shown again.
      </p>
      <label for="issued-token">Your new token (select it and copy)</label>
      <input type="text" id="issued-token" readonly value={p.issued.token} />
    </div>
  ) : null;

/**
 * The form that creates a token: name, an optional expiry date (at most a year ahead; without
 * one, the kind's default lifetime), and the scopes as checkboxes. `values` refill it after an
 * error (the scopes as one space-separated value).
 */
export const TokenForm = (p: { action: string; csrf: string; kind: tokens.TokenKind; label: string; alert: FormAlert | null; values: Record<string, string>; defaultScopes: readonly string[] }) => {
  const now = clock.now();
  const chosen = p.values.scopes !== undefined ? p.values.scopes.split(' ') : p.defaultScopes;
  return (
    <PostForm action={p.action} csrf={p.csrf} label={p.label}>
      <div class="fields">
        <TextField id="token-name" name="name" label="Token name" value={p.values.name} alert={p.alert} required />
        <div>
          <label for="token-expires">Expiration date (optional; without one, in {p.kind.defaultLifetimeDays} days)</label>
          <input
            type="date"
            id="token-expires"
            name="expires_at"
            value={p.values.expires_at ?? ''}
            min={tomorrowUtc(now)}
            max={day(now / 1000 + tokens.MAX_LIFETIME_DAYS * 86_400)}
            {...invalid('token-expires', p.alert, 'expires_at')}
          />
          <FieldError id="token-expires" alert={p.alert} field="expires_at" />
        </div>
      </div>
      <fieldset>
        <legend>Scopes</legend>
        {TOKEN_SCOPES.map((s) => (
          <label class="choice">
            <input type="checkbox" name="scopes" value={s} checked={chosen.includes(s)} /> {s}
          </label>
        ))}
        <FieldError id="token-scopes" alert={p.alert} field="scopes" />
      </fieldset>
      <FormError alert={p.alert} fields={['name', 'expires_at', 'scopes']} />
      <div class="actions">
        <button class="primary" type="submit">
          Create token
        </button>
      </div>
    </PostForm>
  );
};

/** Tokens with their dates; each active one has a Revoke link (to its confirmation), the others their state. */
export const TokenTable = (p: { rows: AccessTokenRow[]; caption: string; revokeHref: (t: AccessTokenRow) => string }) => (
  <DataTable caption={p.caption} columns={['Name', 'Scopes', 'Created', 'Last used', 'Expires', 'Actions']}>
    {p.rows.map((t) => (
      <tr>
        <td>{t.name}</td>
        <td>{t.scopes.join(', ')}</td>
        <td>
          <When iso={t.created_at} />
        </td>
        <td>{t.last_used_at ? <When iso={t.last_used_at} /> : 'never'}</td>
        <td>{day(t.expires_at)}</td>
        <td>
          {isActive(t) ? (
            <a class="button danger" href={p.revokeHref(t)} aria-label={`Revoke ${t.name}`}>
              Revoke
            </a>
          ) : t.revoked ? (
            'revoked'
          ) : (
            'expired'
          )}
        </td>
      </tr>
    ))}
  </DataTable>
);

/** The confirmation before a token is revoked: what stops working, and the button. */
export const RevokeTokenConfirm = (p: { token: AccessTokenRow; owner: string; action: string; viewer: Viewer; returnTo: string }) => (
  <Confirm title={`Revoke the token ${p.token.name}?`} action={p.action} csrf={p.viewer.csrf} returnTo={p.returnTo} confirmLabel={`Revoke ${p.token.name}`}>
    <p>
      Anything that uses it to act as {p.owner} on the API (scopes {p.token.scopes.join(', ')}) gets 401 from its next call. This cannot be undone.
    </p>
  </Confirm>
);

/** What a token form asked for, as typed (to fill it in again), and read with the API's own schema. */
const readTokenForm = (form: FormFields) => {
  const scopes = [form.scopes ?? []].flat().filter((s): s is string => typeof s === 'string');
  const values = { name: formText(form, 'name'), expires_at: formText(form, 'expires_at'), scopes: scopes.join(' ') };
  return { values, read: () => parseForm(NewAccessTokenBody, { name: values.name, scopes, expires_at: values.expires_at || undefined }) };
};

/**
 * Issues a token of `kind` for `userId` from a submitted token form (behind `formCsrf({ all:
 * true })`, for the repeated scopes): `render` shows the page with the token once (201,
 * no-store), or with the API's refusal beside its field (400). An unknown or inactive user is
 * the 404 page.
 */
export const issueFromForm = async <E extends ConsoleEnv>(
  c: Context<E>,
  form: FormFields,
  target: { userId: number; kind: tokens.TokenKind; formName: string },
  render: (flash: Flash, issued: IssuedToken | undefined, status: 201 | 400) => Response | Promise<Response>,
): Promise<Response> => {
  const { values, read } = readTokenForm(form);
  try {
    const issued = await issueTokenFor(c.env, target.userId, target.kind, read());
    c.header('Cache-Control', 'no-store');
    return render({ notice: `Created the token ${issued.row.name}.` }, { name: issued.row.name, token: issued.token }, 201);
  } catch (e) {
    if (!(e instanceof ApiError)) throw e;
    if (e.status === 404) return problemPage(c, e);
    return render({ alert: { form: target.formName, ...describeProblem(e) }, values }, undefined, 400);
  }
};
