import { Hono } from 'hono';
import { rulesBody } from '../../api/access-request-rules';
import { mayEditSettings, type Kind } from '../../auth/policy';
import { publicRules } from '../../durable/namespace/request-rules';
import * as service from '../../services/namespaces';
import { formText, invalidField, parseForm } from '../actions';
import { alertFor, FieldError, FormError, invalid, PostForm, Section } from '../components';
import { formCsrf } from '../form-csrf';
import type { ConsoleEnv } from '../viewer';
import { actOn, ID } from './actions';
import type { NamespaceView } from './view';

const FORM = 'access-request-rules';

/**
 * The access request rules of a group or project, for those who may change its settings: the
 * rules in force as the JSON `GET …/access_request_rules` answers (docs/api.md), edited whole,
 * or dropped so that it inherits its group's again.
 */
export const RequestRules = async (p: { view: NamespaceView }) => {
  const { view } = p;
  if (!mayEditSettings(view.kind, view.standing, false)) return null;
  const { rules, inheritedFrom } = await service.accessRequestRules(view.c.env, view.target);
  const alert = alertFor(view.flash, FORM);
  const text = (alert ? view.flash.values?.rules : undefined) ?? JSON.stringify(publicRules(rules), null, 2);
  return (
    <Section id="access-request-rules" title="Access request rules">
      <p class="muted">
        {inheritedFrom ? `Inherited from ${inheritedFrom}; saving gives this ${view.kind.name} rules of its own.` : `What a request must say, how many approvals it needs, and what is granted at once.`}
      </p>
      <PostForm action={`${view.actions}/access_request_rules`} csrf={view.c.var.viewer.csrf} returnTo={view.pagePath} label="Access request rules">
        <label for="rules-json">Rules (JSON)</label>
        <textarea id="rules-json" name="rules" rows={12} spellcheck={false} {...invalid('rules-json', alert, 'rules')}>
          {text}
        </textarea>
        <FieldError id="rules-json" alert={alert} field="rules" />
        <FormError alert={alert} fields={['rules']} />
        <div class="actions">
          <button class="primary" type="submit" name="action" value="save">
            Save rules
          </button>
          <button type="submit" name="action" value="inherit">
            Inherit the group's
          </button>
        </div>
      </PostForm>
    </Section>
  );
};

/** The rules form: saved whole (validated as `PUT …/access_request_rules` validates), or dropped. */
export const requestRuleActions = (kind: Kind) =>
  new Hono<ConsoleEnv>().post(`/${ID}/-/access_request_rules`, formCsrf(), (c) => {
    const form = c.var.form;
    const values = { rules: formText(form, 'rules') };
    return actOn(c, kind, form, { tab: 'settings', form: FORM, values }, async (target) => {
      if (formText(form, 'action') === 'inherit') {
        const now = await service.setAccessRequestRules(c.env, target, null);
        return now.inheritedFrom ? `The rules of ${now.inheritedFrom} apply again.` : 'No rules apply now.';
      }
      let parsed: unknown;
      try {
        parsed = JSON.parse(values.rules);
      } catch {
        return invalidField('rules', 'is not valid JSON');
      }
      await service.setAccessRequestRules(c.env, target, parseForm(rulesBody(kind), parsed as Record<string, unknown>));
      return `Saved the access request rules of ${target.ref.snapshot.full_path}.`;
    });
  });
