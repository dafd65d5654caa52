import { Hono } from 'hono';
import { z } from '@hono/zod-openapi';
import { DEFAULT_APPROVAL_LEVEL, accessLevelName } from '../../../shared/access-levels';
import { accessLevelParam, membershipExpiry } from '../../api/access-requests';
import { dateParam } from '../../api/params';
import { withNamespace } from '../../services/finder';
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
}) => {
  const r = p.request;
  const id = `${p.kind.name}-${p.namespaceId}-request-${r.user_id}`;
  const who = `@${r.username}`;
  const level = Number(p.values?.access_level) || r.access_level || DEFAULT_APPROVAL_LEVEL;
  const approvals = JSON.parse(r.approvals) as Approval[];
  const chosen = p.levels.some((l) => l.value === level) ? level : p.levels[p.levels.length - 1]?.value;
  return (
    <li class="request" aria-label={`${r.name} (${who})${p.where ? ` for ${p.where}` : ''}`}>
      <div>
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
  const { total, items } = await service.listAccessRequests(view.c.env, view.target, windowFor(page));
  const levels = grantableLevels(view.kind, view.standing);
  return (
    <Section id="access-requests" title={`Access requests (${total})`}>
      {items.length === 0 ? (
        <p class="muted">No one is waiting for access.</p>
      ) : (
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
              />
            );
          })}
        </ul>
      )}
      <Pagination url={view.url} param="requests_page" page={page} total={total} label="access requests" />
    </Section>
  );
};

/** Approving reads the API's own parameters: a grantable level, and an optional date after today. */
const approval = (kind: Kind) => z.object({ access_level: accessLevelParam(kind), expires_at: z.union([dateParam(), z.literal('')]) });

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
      return actOn(c, kind, c.var.form, { tab: 'access_requests', form: approveForm(kind, Number(c.req.param('id')), userId), values, notFound }, async (target) => {
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
      });
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
        <Layout title="Deny access request" user={viewer.user} csrf={viewer.csrf}>
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
      return actOn(c, kind, c.var.form, { tab: 'access_requests', form: approveForm(kind, Number(c.req.param('id')), userId), notFound }, async (target) => {
        // A deny is a manager's answer: one's own request is withdrawn with its own form.
        if (userId === c.var.caller.id) return raise(problems.forbidden());
        const requester = await directory(c.env).getUser(userId);
        await service.removeAccessRequest(c.env, target, userId, formText(c.var.form, 'reason').trim().slice(0, 1000) || null);
        return `Denied the request of @${requester?.username ?? userId} for ${target.ref.snapshot.full_path}.`;
      });
    });
