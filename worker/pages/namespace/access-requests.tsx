import { Hono } from 'hono';
import { z } from '@hono/zod-openapi';
import { DEFAULT_APPROVAL_LEVEL, accessLevelName } from '../../../shared/access-levels';
import { accessLevelParam, membershipExpiry } from '../../api/access-requests';
import { dateParam } from '../../api/params';
import { withNamespace, type Target } from '../../services/finder';
import { hasAccess, mayManageRequests, type Kind } from '../../auth/policy';
import { directory } from '../../durable/directory/directory';
import type { AccessRequestRow, Approval } from '../../durable/namespace/types';
import { problems, raise } from '../../errors';
import * as service from '../../services/namespaces';
import { formText, parseForm, returnTo } from '../actions';
import {
  alertFor,
  ExpiryInput,
  FieldError,
  FormError,
  LevelSelect,
  Pagination,
  pageNumber,
  PostForm,
  Section,
  When,
  windowFor,
  Confirm,
} from '../components';
import { formCsrf } from '../form-csrf';
import { filters, RequestFilterForm, requestFilterOf } from '../request-filter';
import { clock } from '../../clock';
import { Layout } from '../layout';
import type { ConsoleEnv } from '../viewer';
import { actOn, ID, USER_ID } from './actions';
import { grantableLevels, pagePathOf, tabNamed, tabPath, type NamespaceView } from './view';

/** The name of a request's approve form (on the page and the dashboard), so its error shows in that row. */
export const approveForm = (kind: Kind, namespaceId: number, userId: number) => `approve-${kind.name}-${namespaceId}-${userId}`;

/** What a viewer without access sees: request access, or withdraw their pending request. */
export const YourAccess = (p: { view: NamespaceView }) => {
  const { view } = p;
  const { viewer } = view.c.var;
  const alert = alertFor(view.flash, 'access');
  if (hasAccess(view.standing)) return null;
  return (
    <Section id="your-access" title="Your access">
      {view.pending ? (
        <>
          <p>You have asked for access. Its {view.kind.name === 'group' ? 'Owners' : 'Maintainers and Owners'} will answer.</p>
          <PostForm action={`${view.actions}/access_requests/withdraw`} csrf={viewer.csrf} returnTo={view.pagePath}>
            <button type="submit">Withdraw request</button>
          </PostForm>
        </>
      ) : view.row.request_access_enabled ? (
        <>
          <p>You are not a member of this {view.kind.name}.</p>
          <PostForm action={`${view.actions}/access_requests`} csrf={viewer.csrf} returnTo={view.pagePath}>
            <label for="access-reason">Why (optional)</label>
            <textarea id="access-reason" name="reason" maxlength={1000} rows={2} />
            <button class="primary" type="submit">
              Request access
            </button>
          </PostForm>
        </>
      ) : (
        <p class="muted">You are not a member of this {view.kind.name}, and it does not take access requests.</p>
      )}
      <FormError alert={alert} fields={[]} />
    </Section>
  );
};

/** The bulk form's address, id and cap (one POST answers at most this many requests). */
export const BULK_ACTION = '/-/access_requests/bulk';
export const BULK_FORM = 'bulk-requests';
export const BULK_CAP = 100;

/** The value of a request's checkbox in the bulk form: `project:42:7` (its kind, source id, requester id). */
export const selectionOf = (kind: Kind, namespaceId: number, userId: number) => `${kind.name}:${namespaceId}:${userId}`;

/**
 * The bulk form above a list of requests: one level (Developer unless chosen) and an optional
 * expiry for "Approve selected", and "Deny selected" (which asks first). The rows' checkboxes
 * belong to it by their `form` attribute, so each row keeps its own approve form. "Select all
 * shown" is a link that shows the page with every box ticked: the pages run no script.
 */
export const BulkForm = (p: { csrf: string; returnTo: string; url: string; allSelected: boolean; levels: ReturnType<typeof grantableLevels>; earliestExpiry: string; alert: ReturnType<typeof alertFor>; values?: Record<string, string> }) => {
  const toggle = new URL(p.url);
  if (p.allSelected) toggle.searchParams.delete('select');
  else toggle.searchParams.set('select', 'all');
  const level = Number(p.values?.access_level) || DEFAULT_APPROVAL_LEVEL;
  return (
    <PostForm action={BULK_ACTION} csrf={p.csrf} returnTo={p.returnTo} class="row-form bulk" id={BULK_FORM} label="Answer the selected requests">
      <a href={toggle.pathname + toggle.search}>{p.allSelected ? 'Clear selection' : 'Select all shown'}</a>
      <label for="bulk-level">Level</label>
      <LevelSelect id="bulk-level" levels={p.levels} selected={level} label="Access level for the selected requests" alert={p.alert} />
      <label for="bulk-expires">Expires</label>
      <ExpiryInput id="bulk-expires" value={p.values?.expires_at} label="Expiry date for the selected requests (optional)" alert={p.alert} earliest={p.earliestExpiry} />
      <button class="primary" type="submit" name="decision" value="approve">
        Approve selected
      </button>
      <button class="danger" type="submit" name="decision" value="deny">
        Deny selected
      </button>
      <FieldError id="bulk-level" alert={p.alert} field="access_level" />
      <FieldError id="bulk-expires" alert={p.alert} field="expires_at" />
      <FormError alert={p.alert} fields={['access_level', 'expires_at']} />
    </PostForm>
  );
};

/** An end as people read it: a date, or a date-time in UTC to the minute. */
const endText = (end: string): string => (end.length > 10 ? `${end.slice(0, 16).replace('T', ' ')} UTC` : end);

/** One pending request with its approve form (level, optional expiry) and the way to deny it. */
export const RequestRow = (p: {
  kind: Kind;
  namespaceId: number;
  request: Pick<AccessRequestRow, 'user_id' | 'username' | 'name' | 'requested_at' | 'reason' | 'access_level' | 'expires_at' | 'approvals_required' | 'approvals'>;
  actions: string;
  levels: ReturnType<typeof grantableLevels>;
  csrf: string;
  returnTo: string;
  earliestExpiry: string;
  where?: string;
  alert: ReturnType<typeof alertFor>;
  values?: Record<string, string>;
  /** Its checkbox in the bulk form, ticked or not (none: no bulk form on the page). */
  selected?: boolean;
}) => {
  const r = p.request;
  const id = `${p.kind.name}-${p.namespaceId}-request-${r.user_id}`;
  const who = `@${r.username}`;
  const level = Number(p.values?.access_level) || r.access_level || DEFAULT_APPROVAL_LEVEL;
  const approvals = JSON.parse(r.approvals) as Approval[];
  const chosen = p.levels.some((l) => l.value === level) ? level : p.levels[p.levels.length - 1]?.value;
  return (
    <li class="request" aria-label={`${r.name} (${who})${p.where ? ` for ${p.where}` : ''}`}>
      {p.selected === undefined ? null : (
        <input
          type="checkbox"
          class="select"
          name="requests"
          value={selectionOf(p.kind, p.namespaceId, r.user_id)}
          form={BULK_FORM}
          checked={p.selected}
          aria-label={`Select ${who}'s request${p.where ? ` for ${p.where}` : ''}`}
        />
      )}
      <div class="who">
        <strong>{r.name}</strong> <span class="muted">{who}</span>
        {p.where ? (
          <>
            {' '}
            asks for <a href={pagePathOf(p.kind, p.where)}>{p.where}</a> ({p.kind.name})
          </>
        ) : null}
        <div class="muted">
          requested <When iso={r.requested_at} />
          {r.access_level ? <> · asks for {accessLevelName(r.access_level)}</> : null}
          {r.expires_at ? <> · until {endText(r.expires_at)}</> : null}
          {r.approvals_required > 1 ? (
            <>
              {' '}
              · {approvals.length} of {r.approvals_required} approvals{approvals.length ? ` (${approvals.map((a) => `@${a.username ?? a.id}`).join(', ')})` : ''}
            </>
          ) : null}
        </div>
        {r.reason ? <blockquote class="reason">{r.reason}</blockquote> : null}
      </div>
      <PostForm action={`${p.actions}/access_requests/${r.user_id}/approve`} csrf={p.csrf} returnTo={p.returnTo} class="row-form">
        <label for={`${id}-level`}>Access level for {who}</label>
        <LevelSelect id={`${id}-level`} levels={p.levels} selected={chosen} label={`Access level for ${who}`} alert={p.alert} />
        <label for={`${id}-expires`}>{r.expires_at ? `Expires (blank: as asked, ${endText(r.expires_at)})` : 'Expires (optional)'}</label>
        <ExpiryInput id={`${id}-expires`} value={p.values?.expires_at} label={`Expiry date for ${who} (optional)`} alert={p.alert} earliest={p.earliestExpiry} />
        <button class="primary" type="submit" aria-label={`Approve ${who}`}>
          Approve
        </button>
        <a class="button danger" href={`${p.actions}/access_requests/${r.user_id}/deny?return_to=${encodeURIComponent(p.returnTo)}`} aria-label={`Deny ${who}`}>
          Deny
        </a>
        <FieldError id={`${id}-level`} alert={p.alert} field="access_level" />
        <FieldError id={`${id}-expires`} alert={p.alert} field="expires_at" />
        <FormError alert={p.alert} fields={['access_level', 'expires_at']} />
      </PostForm>
    </li>
  );
};

/** Pending requests, oldest first, for those who may answer them (Owners; Maintainers of projects). */
export const PendingRequests = async (p: { view: NamespaceView }) => {
  const { view } = p;
  if (!mayManageRequests(view.kind, view.standing)) return null;
  const page = pageNumber(view.c.req.query('requests_page'));
  const query = (name: string) => view.c.req.query(name);
  const filter = requestFilterOf(query, clock.now());
  const { total, items } = await service.listAccessRequests(view.c.env, view.target, windowFor(page), { ...filter, source: undefined });
  // The tab's address keeps `?tab=access_requests`, which a GET form would drop from its action.
  const tab = new URL(view.pagePath, 'http://knock.invalid');
  const levels = grantableLevels(view.kind, view.standing);
  const allSelected = view.c.req.query('select') === 'all';
  const bulkAlert = alertFor(view.flash, BULK_FORM);
  return (
    <Section id="access-requests" title={`Access requests (${total})`}>
      {total > 0 || filters(filter) ? <RequestFilterForm query={query} action={tab.pathname} label="Filter the access requests" hidden={Object.fromEntries(tab.searchParams)} /> : null}
      {items.length === 0 ? (
        <p class="muted">{filters(filter) ? 'No pending request matches.' : 'No one is waiting for access.'}</p>
      ) : (
        <>
          <BulkForm
            csrf={view.c.var.viewer.csrf}
            returnTo={view.pagePath}
            url={view.url}
            allSelected={allSelected}
            levels={levels}
            earliestExpiry={view.earliestExpiry}
            alert={bulkAlert}
            values={bulkAlert ? view.flash.values : undefined}
          />
          <ul class="requests">
            {items.map((request) => {
              const alert = alertFor(view.flash, approveForm(view.kind, view.target.id, request.user_id));
              return (
                <RequestRow
                  kind={view.kind}
                  namespaceId={view.target.id}
                  request={request}
                  actions={view.actions}
                  levels={levels}
                  csrf={view.c.var.viewer.csrf}
                  returnTo={view.pagePath}
                  earliestExpiry={view.earliestExpiry}
                  alert={alert}
                  values={alert ? view.flash.values : undefined}
                  selected={allSelected}
                />
              );
            })}
          </ul>
        </>
      )}
      <Pagination url={view.url} param="requests_page" page={page} total={total} label="access requests" />
    </Section>
  );
};

/** Approving reads the API's own parameters: a grantable level, and an optional date after today. */
const approval = (kind: Kind) => z.object({ access_level: accessLevelParam(kind), expires_at: z.union([dateParam(), z.literal('')]) });

/** A form's values for an approval: the level and the expiry date, as typed. */
export type ApprovalValues = { access_level: string; expires_at: string };

/**
 * Approves one request: the approve form of a row and each row of the bulk form
 * (bulk-requests.tsx) run this. Answers the notice; raises the service's refusal.
 */
export const approveRequest = async (c: { env: ConsoleEnv['Bindings'] }, kind: Kind, target: Target, userId: number, values: ApprovalValues): Promise<string> => {
  const input = parseForm(approval(kind), values);
  const choice = { accessLevel: input.access_level, expiresAt: input.expires_at ? membershipExpiry(input.expires_at) : undefined };
  const outcome = await service.approveAccessRequest(c.env, target, userId, choice);
  if ('pending' in outcome) {
    const counted = (JSON.parse(outcome.pending.approvals) as Approval[]).length;
    return `Your approval of @${outcome.pending.username} is counted (${counted} of ${outcome.pending.approvals_required}); it waits for more.`;
  }
  const member = outcome.approved;
  const until = member.expires_at ? ` until ${endText(member.expires_at)}` : '';
  return `Approved @${member.username} as ${accessLevelName(member.access_level)} on ${target.ref.snapshot.full_path}${until}.`;
};

/** Denies one request (a row's confirmed Deny, and each row of a confirmed bulk deny). Answers the notice. */
export const denyRequest = async (c: { env: ConsoleEnv['Bindings']; var: { caller: { id: number } } }, target: Target, userId: number, reason: string | null = null): Promise<string> => {
  // A deny is a manager's answer: one's own request is withdrawn with its own form.
  if (userId === c.var.caller.id) return raise(problems.forbidden());
  const requester = await directory(c.env).getUser(userId);
  await service.removeAccessRequest(c.env, target, userId, reason);
  return `Denied the request of @${requester?.username ?? userId} for ${target.ref.snapshot.full_path}.`;
};

/** The access-request forms of a group's or project's page (and of the dashboard). */
export const accessRequestActions = (kind: Kind) =>
  new Hono<ConsoleEnv>()
    .post(`/${ID}/-/access_requests`, formCsrf(), (c) =>
      actOn(c, kind, c.var.form, { tab: 'overview', form: 'access' }, async (target) => {
        const reason = formText(c.var.form, 'reason').trim().slice(0, 1000) || null;
        await service.requestAccess(c.env, target, c.var.caller, { reason, accessLevel: null, expiresAt: null, breakGlass: false });
        return `You asked for access to ${target.ref.snapshot.full_path}. Its ${kind.name === 'group' ? 'Owners' : 'Maintainers'} will see your request.`;
      }),
    )
    .post(`/${ID}/-/access_requests/withdraw`, formCsrf(), (c) =>
      actOn(c, kind, c.var.form, { tab: 'overview', form: 'access', notFound: 'You have no pending request here.' }, async (target) => {
        await service.removeAccessRequest(c.env, target, c.var.caller.id);
        return `You withdrew your request for ${target.ref.snapshot.full_path}.`;
      }),
    )
    .post(`/${ID}/-/access_requests/${USER_ID}/approve`, formCsrf(), (c) => {
      const userId = Number(c.req.param('user_id'));
      const values = { access_level: formText(c.var.form, 'access_level'), expires_at: formText(c.var.form, 'expires_at') };
      const notFound = 'This request is no longer pending: someone may have answered it already.';
      return actOn(c, kind, c.var.form, { tab: 'access_requests', form: approveForm(kind, Number(c.req.param('id')), userId), values, notFound }, (target) =>
        approveRequest(c, kind, target, userId, values),
      );
    })
    .get(`/${ID}/-/access_requests/${USER_ID}/deny`, async (c) => {
      const userId = Number(c.req.param('user_id'));
      const viewer = c.var.viewer;
      const back = returnTo({ return_to: c.req.query('return_to') ?? '' }, tabPath(kind, `/${kind.route}/${c.req.param('id')}`, tabNamed('access_requests')));
      const { path, requester } = await withNamespace(c, kind, Number(c.req.param('id')), async (target) => {
        if (!mayManageRequests(kind, await service.standingOn(c.env, target))) return raise(problems.forbidden());
        return { path: target.ref.snapshot.full_path, requester: await directory(c.env).getUser(userId) };
      });
      if (!requester) return raise(problems.notFound('User'));
      return c.html(
        <Layout title="Deny access request" viewer={viewer}>
          <Confirm
            title="Deny this access request?"
            action={c.req.path}
            csrf={viewer.csrf}
            returnTo={back}
            confirmLabel={`Deny @${requester.username}`}
            fields={
              <>
                <label for="deny-reason">Reason (optional; they will see it)</label>
                <textarea id="deny-reason" name="reason" maxlength={1000} rows={2} />
              </>
            }
          >
            <p>
              {requester.name} (@{requester.username}) asked for access to <strong>{path}</strong>. Denying removes the request; they may ask again.
            </p>
          </Confirm>
        </Layout>,
      );
    })
    .post(`/${ID}/-/access_requests/${USER_ID}/deny`, formCsrf(), (c) => {
      const userId = Number(c.req.param('user_id'));
      const notFound = 'This request is no longer pending: someone may have answered it already.';
      return actOn(c, kind, c.var.form, { tab: 'access_requests', form: approveForm(kind, Number(c.req.param('id')), userId), notFound }, (target) =>
        denyRequest(c, target, userId, formText(c.var.form, 'reason').trim().slice(0, 1000) || null),
      );
    });
