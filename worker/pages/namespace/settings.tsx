import { Hono } from 'hono';
import { VISIBILITIES } from '../../../shared/schemas';
import { NamespaceChangesSchema } from '../../api/namespaces';
import { mayEditSettings, type Kind } from '../../auth/policy';
import * as service from '../../services/namespaces';
import { formText, parseForm } from '../actions';
import { alertFor, FieldError, FormError, invalid, PostForm, Section } from '../components';
import { formCsrf } from '../form-csrf';
import type { ConsoleEnv } from '../viewer';
import { actOn, ID } from './actions';
import type { NamespaceView } from './view';

const FORM = 'settings';

const VISIBILITY_HELP: Record<(typeof VISIBILITIES)[number], string> = {
  private: 'Private: only members see it',
  internal: 'Internal: every signed-in user sees it',
  public: 'Public: every signed-in user sees it, and may ask for access',
};

/**
 * Name, visibility and whether it takes access requests, for those who may change them: Owners
 * (and a project's Maintainers, all but visibility), as `PUT /groups/:id` and `/projects/:id`.
 */
export const Settings = (p: { view: NamespaceView }) => {
  const { view } = p;
  if (!mayEditSettings(view.kind, view.standing, false)) return null;
  const ownsVisibility = mayEditSettings(view.kind, view.standing, true);
  const alert = alertFor(view.flash, FORM);
  const values = alert ? view.flash.values ?? {} : {};
  const name = values.name ?? view.row.name;
  const visibility = values.visibility ?? view.row.visibility;
  const requests = values.request_access_enabled ? values.request_access_enabled === 'true' : view.row.request_access_enabled;
  const twoFactor = values.require_two_factor_authentication ? values.require_two_factor_authentication === 'true' : view.row.require_two_factor_authentication;
  return (
    <Section id="settings" title="Settings">
      <PostForm action={`${view.actions}/settings`} csrf={view.c.var.viewer.csrf} returnTo={view.pagePath} label="Settings">
        <label for="settings-name">Name</label>
        <input type="text" id="settings-name" name="name" required maxlength={255} value={name} {...invalid('settings-name', alert, 'name')} />
        <FieldError id="settings-name" alert={alert} field="name" />
        {ownsVisibility ? (
          <fieldset>
            <legend>Visibility</legend>
            {VISIBILITIES.map((v) => (
              <label class="choice">
                <input type="radio" name="visibility" value={v} checked={visibility === v} /> {VISIBILITY_HELP[v]}
              </label>
            ))}
            <FieldError id="settings-visibility" alert={alert} field="visibility" />
          </fieldset>
        ) : (
          <p class="muted">Visibility: {view.row.visibility} (Owners change it).</p>
        )}
        <label class="choice">
          <input type="checkbox" name="request_access_enabled" value="true" checked={requests} /> Users may request access
        </label>
        {view.kind.name === 'group' ? (
          <label class="choice">
            <input type="checkbox" name="require_two_factor_authentication" value="true" checked={twoFactor} /> All members must set up two-factor authentication
          </label>
        ) : null}
        <FormError alert={alert} fields={['name', 'visibility']} />
        <div class="actions">
          <button class="primary" type="submit">
            Save settings
          </button>
        </div>
      </PostForm>
    </Section>
  );
};

/** The settings form of a group's or project's page. */
export const settingsActions = (kind: Kind) =>
  new Hono<ConsoleEnv>().post(`/${ID}/-/settings`, formCsrf(), (c) => {
    const form = c.var.form;
    const values = {
      name: formText(form, 'name'),
      // Only an Owner's form has it; without it, visibility stays as it is.
      ...(typeof form.visibility === 'string' ? { visibility: form.visibility } : {}),
      request_access_enabled: formText(form, 'request_access_enabled') === 'true' ? 'true' : 'false',
      require_two_factor_authentication: formText(form, 'require_two_factor_authentication') === 'true' ? 'true' : 'false',
    };
    return actOn(c, kind, form, { tab: 'settings', form: FORM, values }, async (target) => {
      const row = await service.updateNamespace(c.env, kind, target, parseForm(NamespaceChangesSchema, values));
      return `Saved the settings of ${row.full_path}.`;
    });
  });
