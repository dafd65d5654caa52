import { Hono } from 'hono';
import type { FC } from 'hono/jsx';
import { accessLevelName, levelsAllowedToApprove, OWNER } from '../../shared/access-levels';
import type { OwnAccessRequest } from '../../shared/api-types';
import { KIND_OF_SOURCE_TYPE, presentOwnRequest } from '../api/presenters/inbox';
import { KINDS, type Kind } from '../auth/policy';
import { clock, todayUtc } from '../clock';
import * as inboxService from '../services/inbox';
import * as service from '../services/namespaces';
import { alertFor, FlashNotice, Level, Pagination, pageNumber, PostForm, Section, When, windowFor } from './components';
import { takeFlash, type Flash } from './flash';
import { Layout } from './layout';
import { approveForm, BULK_FORM, BulkForm, RequestRow } from './namespace/access-requests';
import { filters, RequestFilterForm, requestFilterOf } from './request-filter';
import { askOfDetails } from '../api/presenters/member';
import { actionsOf, pagePathOf } from './namespace/view';
import type { ConsoleEnv, PageContext } from './viewer';
import { userIndexPartitions, type IndexPartitionStub } from '../durable/index-partition/index-partition';

/** What every dashboard section reads. */
interface DashboardView {
  c: PageContext;
  flash: Flash;
  url: string;
  /** The viewer's index partitions, asked of their `User` once for the sections that read them. */
  partitions: Promise<IndexPartitionStub[]>;
}

/** The levels the bulk form offers on the dashboard, where rows are groups and projects: each row's own rule still applies. */
const BULK_LEVELS = levelsAllowedToApprove('project', OWNER);

/**
 * What needs the viewer: the owners' inbox, read as `GET /api/v4/access_requests` reads it (their
 * `User` object: every group they own and project they maintain, directly or through an ancestor
 * group; every request, from the index partitions, for an administrator), oldest first unless
 * sorted otherwise, filtered in that one read; each approvable in one click, or many at once
 * with the bulk form.
 */
const NeedsYou = async (p: { view: DashboardView }) => {
  const { c, flash } = p.view;
  const page = pageNumber(c.req.query('inbox_page'));
  const filter = requestFilterOf((n) => c.req.query(n), clock.now());
  const filtered = filters(filter);
  const { page: inbox } = await inboxService.readInbox(c.env, c.var.caller, filter, windowFor(page), null);
  const total = inbox?.total ?? 0;
  // Back to this view after a form, filtered and sorted as it is, without the ticked boxes.
  const url = new URL(p.view.url);
  url.searchParams.delete('select');
  const here = url.pathname + url.search;
  const allSelected = c.req.query('select') === 'all';
  const bulkAlert = alertFor(flash, BULK_FORM);
  return (
    <Section id="inbox" title={`Needs you (${total})`}>
      <RequestFilterForm query={(n) => c.req.query(n)} action="/" label="Filter the requests that need you" sources />
      {!inbox || inbox.items.length === 0 ? (
        <p class="muted">{filtered ? 'No pending request matches.' : "No pending access requests. You're all caught up."}</p>
      ) : (
        <>
          <BulkForm csrf={c.var.viewer.csrf} returnTo={here} url={p.view.url} allSelected={allSelected} levels={BULK_LEVELS} earliestExpiry={todayUtc()} alert={bulkAlert} values={bulkAlert ? flash.values : undefined} />
          <ul class="requests">
            {inbox.items.map((item) => {
              const kind = KINDS[item.kind];
              const alert = alertFor(flash, approveForm(kind, item.namespace_id, item.user_id));
              return (
                <RequestRow
                  kind={kind}
                  namespaceId={item.namespace_id}
                  request={{ ...item, ...askOfDetails(item.requested_at, item.details) }}
                  actions={actionsOf(kind, item.namespace_id)}
                  levels={levelsAllowedToApprove(item.kind, item.access_level)}
                  csrf={c.var.viewer.csrf}
                  returnTo={here}
                  earliestExpiry={todayUtc()}
                  where={item.source_full_path}
                  alert={alert}
                  values={alert ? flash.values : undefined}
                  selected={allSelected}
                />
              );
            })}
          </ul>
        </>
      )}
      <Pagination url={p.view.url} param="inbox_page" page={page} total={total} label="requests that need you" />
    </Section>
  );
};

/** How one of the viewer's requests ended, in words (the status is the API's, `presentOwnRequest`). */
const outcomeText = (r: OwnAccessRequest): string => {
  const until = r.expires_at ? ` until ${r.expires_at}` : '';
  const why = r.denial_reason ? `: ${r.denial_reason}` : '';
  switch (r.status) {
    case 'pending':
      return 'waiting for an answer';
    case 'approved':
      return `approved as ${accessLevelName(r.access_level ?? 0)}${until}`;
    case 'expired':
      return `approved as ${accessLevelName(r.access_level ?? 0)}, expired on ${r.expires_at ?? ''}`;
    case 'denied':
      return `denied${why}`;
    case 'withdrawn':
      return 'withdrawn by you';
    case 'lapsed':
      return 'expired before anyone answered';
  }
};

/**
 * The viewer's own requests, read as `GET /api/v4/user/access_requests` reads them: those pending
 * (each with Withdraw) and how the others ended in the last 30 days.
 */
const YourRequests = async (p: { view: DashboardView }) => {
  const { c } = p.view;
  const page = pageNumber(c.req.query('mine_page'));
  const { total, items } = await inboxService.ownRequests(c.env, c.var.caller, windowFor(page), p.view.partitions);
  const today = todayUtc();
  const requests = items.map((r) => presentOwnRequest(r, today));
  return (
    <Section id="my-requests" title="Your requests">
      {requests.length === 0 ? (
        <p class="muted">You are not waiting for any access, and none of your requests was answered in the last 30 days.</p>
      ) : (
        <ul class="plain">
          {requests.map((r) => {
            const kind = KINDS[KIND_OF_SOURCE_TYPE[r.source_type]];
            return (
              <li aria-label={`Your request for ${r.source_full_path}`}>
                <a href={pagePathOf(kind, r.source_full_path)}>{r.source_full_path}</a> <span class="muted">({kind.name})</span>{' '}
                <span class={`status status-${r.status}`}>{outcomeText(r)}</span>{' '}
                <span class="muted">
                  {r.decided_at ? <When iso={r.decided_at} /> : <>asked <When iso={r.requested_at} /></>}
                </span>
                {r.status === 'pending' ? (
                  <>
                    {' '}
                    <PostForm action={`${actionsOf(kind, r.source_id)}/access_requests/withdraw`} csrf={c.var.viewer.csrf} returnTo="/" class="inline">
                      <button type="submit" aria-label={`Withdraw your request for ${r.source_full_path}`}>
                        Withdraw
                      </button>
                    </PostForm>
                  </>
                ) : null}
              </li>
            );
          })}
        </ul>
      )}
      <Pagination url={p.view.url} param="mine_page" page={page} total={total} label="your requests" />
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
    const { total, namespaces } = await service.listNamespaces(c.env, kind, { userId: viewer.id, admin: viewer.admin, membership: true }, windowFor(page), p.view.partitions);
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

/** The dashboard's sections, in order; each one component that loads its own data. */
const SECTIONS: FC<{ view: DashboardView }>[] = [NeedsYou, YourRequests, Memberships(KINDS.group), Memberships(KINDS.project)];

/** `/`: the signed-in user's dashboard. */
export const dashboardPages = new Hono<ConsoleEnv>().get('/', async (c) => {
  const viewer = c.var.viewer;
  const view: DashboardView = { c, flash: await takeFlash(c), url: c.req.url, partitions: userIndexPartitions(c.env, c.var.caller.id) };
  return c.html(
    <Layout title="Dashboard" viewer={viewer} current="/" wide>
      <h1>Hello, {viewer.user.name}</h1>
      <FlashNotice flash={view.flash} />
      {SECTIONS.map((S) => (
        <S view={view} />
      ))}
    </Layout>,
  );
});
