import { Hono, type Context } from 'hono';
import type { GroupHook, HookEvent, ProjectHook } from '../../../shared/api-types';
import { hookChange, HookChangeFields, newHookSettings, NewHookFields } from '../../api/hooks';
import { withNamespace, type Target } from '../../services/finder';
import { presentGroupHook, presentHookEvent, presentProjectHook } from '../../api/presenters/hook';
import { mayManageEvents, type Kind } from '../../auth/policy';
import { publicOrigin } from '../../config';
import type { HookRow } from '../../durable/namespace/webhooks';
import type { HookTrigger } from '../../events/event';
import { ApiError } from '../../errors';
import * as events from '../../services/events';
import { formText, parseForm, returnTo } from '../actions';
import { problemPage } from '../error-page';
import { alertFor, Confirm, DataTable, FieldError, FlashNotice, FormError, invalid, Pagination, pageNumber, PostForm, Section, When, windowFor } from '../components';
import { setFlash, takeFlash, type Flash } from '../flash';
import { formCsrf, type FormFields } from '../form-csrf';
import { Layout } from '../layout';
import { describeProblem, isRefusal } from '../problems';
import type { ConsoleEnv, PageContext } from '../viewer';
import { actOn, ID } from './actions';
import { actionsOf, pagePathOf, tabNamed, tabPath, type NamespaceView } from './view';

/** A hook id in an action's address. */
const HOOK_ID = ':hook_id{[0-9]+}';

/** The name of the add form, and of a hook's edit, test and resend forms (their errors show beside them). */
const ADD_FORM = 'hook-add';
const editForm = (hookId: number) => `hook-${hookId}`;
const testForm = (hookId: number) => `hook-test-${hookId}`;
const resendForm = (hookId: number) => `hook-resend-${hookId}`;

/** A hook as the API shows it (never its tokens), for either kind. */
const presentHook = (kind: Kind, namespaceId: number, h: HookRow): GroupHook | ProjectHook =>
  kind.name === 'group' ? presentGroupHook(namespaceId, h) : presentProjectHook(namespaceId, h);

/** The events a hook may get (GitLab's trigger fields), their names and what each covers. */
const TRIGGERS: { field: HookTrigger; name: string; covers: string }[] = [
  { field: 'member_events', name: 'Member events', covers: 'added, changed, removed, expired' },
  { field: 'access_request_events', name: 'Access request events', covers: 'requested, withdrawn, denied' },
];

const STATUS_TEXT: Record<GroupHook['alert_status'], string> = {
  executable: 'active',
  temporarily_disabled: 'resting after failures',
  disabled: 'disabled after failures (save it to enable it again)',
};

/** Where a hook's page is: under the group's or project's forms, by ids. */
const hookPath = (kind: Kind, namespaceId: number, hookId: number) => `${actionsOf(kind, namespaceId)}/hooks/${hookId}`;

/** The fields of a hook's form, read as the API reads them: an unchecked box is `false`. */
const hookValues = (form: FormFields) => ({
  url: formText(form, 'url').trim(),
  name: formText(form, 'name'),
  member_events: String(formText(form, 'member_events') === 'true'),
  access_request_events: String(formText(form, 'access_request_events') === 'true'),
  enable_ssl_verification: String(formText(form, 'enable_ssl_verification') === 'true'),
});

/**
 * The add and edit form of a hook: URL, secret token, name, the events it gets, SSL
 * verification. The token is never filled in again: on edit, empty keeps the current one.
 */
const HookFields = (p: { prefix: string; alert: ReturnType<typeof alertFor>; values: Partial<Record<string, string>>; editing: boolean }) => {
  const { prefix, alert, values } = p;
  const checked = (field: string) => (values[field] === undefined ? true : values[field] === 'true');
  return (
    <>
      <div class="fields">
        <div>
          <label for={`${prefix}-url`}>URL</label>
          <input type="url" id={`${prefix}-url`} name="url" required autocomplete="off" value={values.url ?? ''} {...invalid(`${prefix}-url`, alert, 'url')} />
          <FieldError id={`${prefix}-url`} alert={alert} field="url" />
        </div>
        <div>
          <label for={`${prefix}-token`}>Secret token{p.editing ? ' (empty: keep it; a new URL drops it)' : ' (optional)'}</label>
          <input type="password" id={`${prefix}-token`} name="token" autocomplete="new-password" {...invalid(`${prefix}-token`, alert, 'token')} />
          <FieldError id={`${prefix}-token`} alert={alert} field="token" />
        </div>
        <div>
          <label for={`${prefix}-name`}>Name (optional)</label>
          <input type="text" id={`${prefix}-name`} name="name" autocomplete="off" value={values.name ?? ''} {...invalid(`${prefix}-name`, alert, 'name')} />
          <FieldError id={`${prefix}-name`} alert={alert} field="name" />
        </div>
      </div>
      <fieldset>
        <legend>Trigger</legend>
        {TRIGGERS.map((t) => (
          <label class="choice">
            <input type="checkbox" name={t.field} value="true" checked={checked(t.field)} /> {t.name} ({t.covers})
          </label>
        ))}
      </fieldset>
      <label class="choice">
        <input type="checkbox" name="enable_ssl_verification" value="true" checked={checked('enable_ssl_verification')} /> Enable SSL verification
      </label>
      <FormError alert={alert} fields={['url', 'token', 'name']} />
    </>
  );
};

/** The Test button of a hook: sends a sample event of the chosen kind now. */
const TestForm = (p: { kind: Kind; namespaceId: number; hook: { id: number; url: string }; csrf: string; returnTo: string; flash: Flash }) => {
  const id = `hook-${p.hook.id}-trigger`;
  const alert = alertFor(p.flash, testForm(p.hook.id));
  return (
    <PostForm action={`${hookPath(p.kind, p.namespaceId, p.hook.id)}/test`} csrf={p.csrf} returnTo={p.returnTo} class="row-form" label={`Test ${p.hook.url}`}>
      <label for={id}>Sample event</label>
      <select id={id} name="trigger">
        {TRIGGERS.map((t) => (
          <option value={t.field}>{t.name}</option>
        ))}
      </select>
      <button type="submit" aria-label={`Test ${p.hook.url}`}>
        Test
      </button>
      <FormError alert={alert} fields={[]} />
    </PostForm>
  );
};

/** A group's or project's webhooks, for those who may manage them (Owners; a project's Maintainers). */
export const Webhooks = async (p: { view: NamespaceView }) => {
  const { view } = p;
  if (!mayManageEvents(view.kind, view.standing)) return null;
  const page = pageNumber(view.c.req.query('hooks_page'));
  const { total, items } = await events.listHooks(view.c.env, view.target, windowFor(page));
  const csrf = view.c.var.viewer.csrf;
  const addAlert = alertFor(view.flash, ADD_FORM);
  return (
    <Section id="webhooks" title={`Webhooks (${total})`}>
      {items.length === 0 ? (
        <p class="muted">No webhooks. Add one to have Knock send each access request and member change to a URL.</p>
      ) : (
        <ul class="plain hooks">
          {items.map((row) => {
            const hook = presentHook(view.kind, view.target.id, row);
            const path = hookPath(view.kind, view.target.id, hook.id);
            const triggers = TRIGGERS.filter((t) => hook[t.field]).map((t) => t.name);
            return (
              <li aria-label={`Webhook ${hook.url}`}>
                <div>
                  <code>{hook.url}</code> {hook.name ? <strong>{hook.name}</strong> : null}
                  <div class="muted">
                    {triggers.length ? triggers.join(', ') : 'no events'} · SSL verification {hook.enable_ssl_verification ? 'on' : 'off'} · {STATUS_TEXT[hook.alert_status]}
                  </div>
                </div>
                <div class="actions">
                  <a class="button" href={path} aria-label={`Edit and deliveries of ${hook.url}`}>
                    Edit and deliveries
                  </a>
                  <a class="button danger" href={`${path}/delete`} aria-label={`Delete ${hook.url}`}>
                    Delete
                  </a>
                </div>
                <TestForm kind={view.kind} namespaceId={view.target.id} hook={hook} csrf={csrf} returnTo={view.pagePath} flash={view.flash} />
              </li>
            );
          })}
        </ul>
      )}
      <Pagination url={view.url} param="hooks_page" page={page} total={total} label="webhooks" />
      <PostForm action={`${view.actions}/hooks`} csrf={csrf} returnTo={view.pagePath} class="add-hook" label="Add a webhook">
        <h3>Add a webhook</h3>
        <HookFields prefix="add-hook" alert={addAlert} values={addAlert ? (view.flash.values ?? {}) : {}} editing={false} />
        <div class="actions">
          <button class="primary" type="submit">
            Add webhook
          </button>
        </div>
      </PostForm>
    </Section>
  );
};

/** One delivery of the log, with what was sent and answered, and Resend. */
const DeliveryRow = (p: { d: HookEvent; action: string; csrf: string; returnTo: string }) => (
  <tr>
    <td>
      <When iso={p.d.created_at} />
    </td>
    <td>{p.d.trigger}</td>
    <td>
      {p.d.response_status}
      {p.d.internal_error_message ? <span class="muted"> ({p.d.internal_error_message})</span> : null}
    </td>
    <td>{p.d.attempt}</td>
    <td>{p.d.execution_duration.toFixed(2)} s</td>
    <td>
      <details>
        <summary>Request and response</summary>
        <pre>{JSON.stringify(p.d.request_data, null, 2)}</pre>
        <pre>{p.d.response_body}</pre>
      </details>
    </td>
    <td>
      <PostForm action={`${p.action}/${p.d.id}/resend`} csrf={p.csrf} returnTo={p.returnTo} class="inline">
        <button type="submit" aria-label={`Resend delivery ${p.d.id}`}>
          Resend
        </button>
      </PostForm>
    </td>
  </tr>
);

/** A hook's page: its edit form, Test, Delete, and its delivery log (seven days, newest first). */
const HookPage = async (p: { c: PageContext; kind: Kind; target: Target; hook: HookRow; flash: Flash; signingSecret?: string }) => {
  const { c, kind, target, flash } = p;
  const viewer = c.var.viewer;
  const hook = presentHook(kind, target.id, p.hook);
  const path = hookPath(kind, target.id, hook.id);
  const fullPath = target.ref.snapshot.full_path;
  const page = pageNumber(c.req.query('deliveries_page'));
  const log = await events.listHookEvents(c.env, target, hook.id, undefined, windowFor(page));
  const alert = alertFor(flash, editForm(hook.id));
  const values = alert
    ? (flash.values ?? {})
    : {
        url: hook.url,
        name: hook.name,
        member_events: String(hook.member_events),
        access_request_events: String(hook.access_request_events),
        enable_ssl_verification: String(hook.enable_ssl_verification),
      };
  const resendAlert = alertFor(flash, resendForm(hook.id));
  return (
    <Layout title={`Webhook · ${fullPath}`} viewer={viewer} wide>
      <FlashNotice flash={flash} />
      {p.signingSecret ? (
        <div class="secret card" role="status">
          <p>Added the webhook. Copy its signing secret (Standard Webhooks) now: it will not be shown again.</p>
          <label for="signing-secret">Signing secret</label>
          <input type="text" id="signing-secret" readonly value={p.signingSecret} />
        </div>
      ) : null}
      <p>
        <a href={tabPath(kind, pagePathOf(kind, fullPath), tabNamed('hooks'))}>← Webhooks of {fullPath}</a>
      </p>
      <Section id="hook" title={`Webhook ${hook.url}`}>
        <p class="muted">{STATUS_TEXT[hook.alert_status]}{hook.disabled_until ? <> until <When iso={hook.disabled_until} /></> : null}</p>
        <PostForm action={path} csrf={viewer.csrf} returnTo={path} label="Edit webhook">
          <HookFields prefix="edit-hook" alert={alert} values={values} editing />
          <div class="actions">
            <button class="primary" type="submit">
              Save changes
            </button>
            <a class="button danger" href={`${path}/delete`} aria-label={`Delete ${hook.url}`}>
              Delete
            </a>
          </div>
        </PostForm>
        <TestForm kind={kind} namespaceId={target.id} hook={hook} csrf={viewer.csrf} returnTo={path} flash={flash} />
      </Section>
      <Section id="deliveries" title={`Deliveries of the last seven days (${log.total})`}>
        <FormError alert={resendAlert} fields={[]} />
        {log.items.length === 0 ? (
          <p class="muted">Nothing has been sent to this webhook yet.</p>
        ) : (
          <DataTable caption="Deliveries, newest first" columns={['Time', 'Trigger', 'Status', 'Attempt', 'Duration', 'Details', 'Resend']}>
            {log.items.map(presentHookEvent).map((d) => (
              <DeliveryRow d={d} action={`${path}/events`} csrf={viewer.csrf} returnTo={path} />
            ))}
          </DataTable>
        )}
        <Pagination url={c.req.url} param="deliveries_page" page={page} total={log.total} label="deliveries" />
      </Section>
    </Layout>
  );
};

const hookIdOf = <E extends ConsoleEnv>(c: Context<E>) => Number(c.req.param('hook_id'));

/** The webhook forms and pages of a group or project: the same services and checks as its hooks API. */
export const hookActions = (kind: Kind) =>
  new Hono<ConsoleEnv>()
    .post(`/${ID}/-/hooks`, formCsrf(), async (c) => {
      const values = hookValues(c.var.form);
      const token = formText(c.var.form, 'token');
      try {
        const html = await withNamespace(c, kind, Number(c.req.param('id')), async (target) => {
          const input = parseForm(NewHookFields, { ...values, token });
          const created = await events.createHook(c.env, target, newHookSettings(input), publicOrigin(c.env, c.req.url));
          // The signing secret is on this answer only: the hook's object keeps it sealed.
          return (await HookPage({ c, kind, target, hook: created.hook, flash: {}, signingSecret: created.signingSecret })).toString();
        });
        c.header('Cache-Control', 'no-store');
        return c.html(html, 201);
      } catch (e) {
        if (isRefusal(e)) return problemPage(c, e);
        if (!(e instanceof ApiError)) throw e;
        await setFlash(c, { alert: { form: ADD_FORM, ...describeProblem(e) }, values });
        return c.redirect(returnTo(c.var.form, tabPath(kind, `/${kind.route}/${c.req.param('id')}`, tabNamed('hooks'))), 303);
      }
    })
    .get(`/${ID}/-/hooks/${HOOK_ID}`, async (c) => {
      const flash = await takeFlash(c);
      const html = await withNamespace(c, kind, Number(c.req.param('id')), async (target) => {
        const hook = await events.getHook(c.env, target, hookIdOf(c));
        return (await HookPage({ c, kind, target, hook, flash })).toString();
      });
      return c.html(html);
    })
    .post(`/${ID}/-/hooks/${HOOK_ID}`, formCsrf(), (c) => {
      const hookId = hookIdOf(c);
      const values = hookValues(c.var.form);
      const token = formText(c.var.form, 'token');
      return actOn(c, kind, c.var.form, { tab: 'hooks', form: editForm(hookId), values, notFound: 'This webhook has been deleted.' }, async (target) => {
        const input = parseForm(HookChangeFields, { ...values, ...(token ? { token } : {}) });
        const hook = await events.updateHook(c.env, target, hookId, hookChange(input));
        return `Saved the webhook ${hook.url}.`;
      });
    })
    .post(`/${ID}/-/hooks/${HOOK_ID}/test`, formCsrf(), (c) => {
      const hookId = hookIdOf(c);
      const trigger = TRIGGERS.find((t) => t.field === formText(c.var.form, 'trigger'))?.field ?? 'member_events';
      return actOn(c, kind, c.var.form, { tab: 'hooks', form: testForm(hookId), notFound: 'This webhook has been deleted.' }, async (target) => {
        await events.testHook(c.env, target, hookId, trigger);
        return `Sent a sample ${trigger === 'member_events' ? 'member' : 'access request'} event: the webhook answered with success.`;
      });
    })
    .post(`/${ID}/-/hooks/${HOOK_ID}/events/:event_id{[0-9]+}/resend`, formCsrf(), (c) => {
      const hookId = hookIdOf(c);
      const eventId = Number(c.req.param('event_id'));
      return actOn(c, kind, c.var.form, { tab: 'hooks', form: resendForm(hookId), notFound: 'This delivery is no longer in the log.' }, async (target) => {
        const status = await events.resendHookEvent(c.env, target, hookId, eventId);
        return status === null ? `Resent delivery ${eventId}: no answer came.` : `Resent delivery ${eventId}: the webhook answered ${status}.`;
      });
    })
    .get(`/${ID}/-/hooks/${HOOK_ID}/delete`, async (c) => {
      const viewer = c.var.viewer;
      const { hook, fullPath } = await withNamespace(c, kind, Number(c.req.param('id')), async (target) => ({
        hook: await events.getHook(c.env, target, hookIdOf(c)),
        fullPath: target.ref.snapshot.full_path,
      }));
      const back = tabPath(kind, pagePathOf(kind, fullPath), tabNamed('hooks'));
      return c.html(
        <Layout title="Delete webhook" viewer={viewer}>
          <Confirm title="Delete this webhook?" action={c.req.path} csrf={viewer.csrf} returnTo={back} confirmLabel="Delete webhook">
            <p>
              Knock stops sending the events of <strong>{fullPath}</strong> to <code>{hook.url}</code>, and its queued deliveries and delivery log are deleted.
              This cannot be undone.
            </p>
          </Confirm>
        </Layout>,
      );
    })
    .post(`/${ID}/-/hooks/${HOOK_ID}/delete`, formCsrf(), (c) =>
      actOn(c, kind, c.var.form, { tab: 'hooks', form: ADD_FORM, notFound: 'This webhook has been deleted already.' }, async (target) => {
        await events.deleteHook(c.env, target, hookIdOf(c));
        return `Deleted the webhook of ${target.ref.snapshot.full_path}.`;
      }),
    );

