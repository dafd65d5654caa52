import { Hono } from 'hono';
import type { FC } from 'hono/jsx';
import { KINDS, type Kind } from '../auth/policy';
import { directory } from '../durable/directory';
import * as service from '../services/namespaces';
import { clock } from '../clock';
import { alertFor, FlashNotice, Level, Pagination, pageNumber, PostForm, Section, tomorrowUtc, windowFor, PER_PAGE } from './components';
import { takeFlash, type Flash } from './flash';
import { pendingRequestsFor } from './inbox';
import { Layout } from './layout';
import { approveForm, RequestRow } from './namespace/access-requests';
import { actionsOf, pagePathOf } from './namespace/view';
import type { ConsoleEnv, PageContext } from './viewer';

/** What every dashboard section reads. */
interface DashboardView {
  c: PageContext;
  flash: Flash;
  url: string;
}

/** What needs me: the pending requests the viewer may answer, each approvable in one click. */
const Inbox = async (p: { view: DashboardView }) => {
  const { c, flash } = p.view;
  const page = pageNumber(c.req.query('inbox_page'));
  const inbox = await pendingRequestsFor(c, c.var.caller, page);
  const tomorrow = tomorrowUtc(clock.now());
  return (
    <Section id="inbox" title={`Waiting for you (${inbox.total})`}>
      {inbox.items.length === 0 ? (
        <p class="muted">No pending access requests. You're all caught up.</p>
      ) : (
        <ul class="requests">
          {inbox.items.map((item) => {
            const alert = alertFor(flash, approveForm(item.kind, item.namespace.id, item.request.user_id));
            return (
              <RequestRow
                kind={item.kind}
                namespaceId={item.namespace.id}
                request={item.request}
                actions={actionsOf(item.kind, item.namespace.id)}
                levels={item.levels}
                csrf={c.var.viewer.csrf}
                returnTo="/"
                tomorrow={tomorrow}
                where={item.namespace.fullPath}
                alert={alert}
                values={alert ? flash.values : undefined}
              />
            );
          })}
        </ul>
      )}
      <Pagination url={p.view.url} param="inbox_page" page={page} total={inbox.total} label="requests waiting for you" />
      {inbox.truncated ? <p class="muted">More requests may be waiting on the pages of your groups and projects.</p> : null}
    </Section>
  );
};

/** The viewer's own pending requests, each with a Withdraw button. */
const MyRequests = async (p: { view: DashboardView }) => {
  const { c } = p.view;
  const page = pageNumber(c.req.query('mine_page'));
  const all = await directory(c.env).pendingRequestsOf(c.var.viewer.user.id);
  const shown = all.slice((page - 1) * PER_PAGE, page * PER_PAGE);
  const rows = await Promise.all(shown.map(async (ns) => ({ kind: KINDS[ns.kind], row: await directory(c.env).getNamespace(ns.kind, ns.id) })));
  return (
    <Section id="my-requests" title="Your access requests">
      {rows.length === 0 ? (
        <p class="muted">You are not waiting for any access.</p>
      ) : (
        <ul class="plain">
          {rows.map(({ kind, row }) =>
            row ? (
              <li>
                <a href={pagePathOf(kind, row.full_path)}>{row.full_path}</a> <span class="muted">({kind.name}) waiting for an answer</span>{' '}
                <PostForm action={`${actionsOf(kind, row.id)}/access_requests/withdraw`} csrf={c.var.viewer.csrf} returnTo="/" class="inline">
                  <button type="submit" aria-label={`Withdraw your request for ${row.full_path}`}>
                    Withdraw
                  </button>
                </PostForm>
              </li>
            ) : null,
          )}
        </ul>
      )}
      <Pagination url={p.view.url} param="mine_page" page={page} total={all.length} label="your access requests" />
    </Section>
  );
};

/** Groups or projects the viewer is a member of (directly or through a group), with their level. */
const Memberships = (kind: Kind): FC<{ view: DashboardView }> =>
  async function Memberships(p) {
    const { c } = p.view;
    const param = `${kind.route}_page`;
    const page = pageNumber(c.req.query(param));
    const viewer = c.var.caller;
    const { total, namespaces } = await service.listNamespaces(c.env, kind, { userId: viewer.id, admin: viewer.admin, membership: true }, windowFor(page));
    return (
      <Section id={`my-${kind.route}`} title={`Your ${kind.route} (${total})`}>
        {namespaces.length === 0 ? (
          <p class="muted">
            You are not a member of any {kind.name} yet. <a href="/explore">Explore</a> to find one.
          </p>
        ) : (
          <ul class="plain">
            {namespaces.map((row) => (
              <li>
                <a href={pagePathOf(kind, row.full_path)}>{row.full_name}</a> <span class="muted">{row.full_path}</span>
                {row.access_level ? (
                  <>
                    {' '}
                    · <Level value={row.access_level} />
                  </>
                ) : null}
              </li>
            ))}
          </ul>
        )}
        <Pagination url={p.view.url} param={param} page={page} total={total} label={`your ${kind.route}`} />
      </Section>
    );
  };

/**
 * The dashboard's sections, in order; each one component that loads its own data. The outcomes
 * of the viewer's past requests come with the requester index of issue 13, as one more entry.
 */
const SECTIONS: FC<{ view: DashboardView }>[] = [Inbox, MyRequests, Memberships(KINDS.group), Memberships(KINDS.project)];

/** `/`: the signed-in user's dashboard. */
export const dashboardPages = new Hono<ConsoleEnv>().get('/', async (c) => {
  const viewer = c.var.viewer;
  const view: DashboardView = { c, flash: await takeFlash(c), url: c.req.url };
  return c.html(
    <Layout title="Dashboard" user={viewer.user} csrf={viewer.csrf} current="/" wide>
      <h1>Hello, {viewer.user.name}</h1>
      <FlashNotice flash={view.flash} />
      {SECTIONS.map((S) => (
        <S view={view} />
      ))}
    </Layout>,
  );
});
