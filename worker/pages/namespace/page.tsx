import { Hono, type Context } from 'hono';
import type { FC } from 'hono/jsx';
import { accessLevelName } from '../../../shared/access-levels';
import { parseNamespaceId, withNamespace } from '../../services/finder';
import { effectiveLevel, KINDS, mayEditSettings, mayManageEvents, mayManageRequests, type Kind, type Standing } from '../../auth/policy';
import { problems, raise } from '../../errors';
import * as service from '../../services/namespaces';
import { FlashNotice } from '../components';
import { takeFlash } from '../flash';
import { Layout } from '../layout';
import type { ConsoleEnv } from '../viewer';
import { accessRequestActions, PendingRequests, YourAccess } from './access-requests';
import { AuditLog } from './audit-log';
import { hookActions, Webhooks } from './hooks';
import { InheritedMembers, memberActions, Members } from './members';
import { Settings, settingsActions } from './settings';
import { RequestRules, requestRuleActions } from './request-rules';
import { loadView, pagePathOf, splitTab, TABS, tabPath, type NamespaceView, type Tab } from './view';

/**
 * What each tab shows: components over the view, each loading what it shows through the services
 * and rendering nothing for a viewer the policy does not allow. A new section is one more entry
 * here, with its forms' routes in `ACTIONS`.
 */
const SECTIONS: Record<Tab['id'], FC<{ view: NamespaceView }>[]> = {
  overview: [YourAccess],
  members: [Members, InheritedMembers],
  access_requests: [PendingRequests],
  settings: [Settings, RequestRules],
  hooks: [Webhooks],
  audit_events: [AuditLog],
};

/** Whether the policy lets the viewer see a tab (the others are not offered, and are 404). */
const TAB_SHOWN: Record<Tab['id'], (kind: Kind, s: Standing) => boolean> = {
  overview: () => true,
  members: () => true,
  access_requests: mayManageRequests,
  settings: (kind, s) => mayEditSettings(kind, s, false),
  hooks: mayManageEvents,
  audit_events: mayManageEvents,
};

/** The forms' routes of the sections above, each built for a kind. */
const ACTIONS = [accessRequestActions, memberActions, settingsActions, requestRuleActions, hookActions];

const standingText = (s: Standing): string => {
  if (s.admin) return 'You are an administrator: Owner everywhere.';
  const level = effectiveLevel(s);
  if (level === 0) return '';
  const how = s.direct >= s.inherited ? 'directly' : 'through a parent group';
  return `You are ${accessLevelName(level)} here, ${how}.`;
};

const Header = (p: { view: NamespaceView }) => {
  const { row, kind, standing } = p.view;
  return (
    <div class="card">
      <p class="muted">
        {kind.label}
        {row.parent?.kind === 'group' ? (
          <>
            {' '}
            in <a href={pagePathOf(KINDS.group, row.parent.full_path)}>{row.parent.full_path}</a>
          </>
        ) : null}
      </p>
      <h1>{row.full_name}</h1>
      <dl class="facts">
        <dt>Path</dt>
        <dd>
          <code>{row.full_path}</code>
        </dd>
        <dt>Visibility</dt>
        <dd>{row.visibility}</dd>
        <dt>Access requests</dt>
        <dd>{row.request_access_enabled ? 'on' : 'off'}</dd>
      </dl>
      {row.description ? <p>{row.description}</p> : null}
      {standingText(standing) ? <p class="muted">{standingText(standing)}</p> : null}
      <nav class="tabs" aria-label={`Pages of ${row.full_path}`}>
        <ul>
          {TABS.filter((tab) => TAB_SHOWN[tab.id](kind, standing)).map((tab) => (
            <li>
              <a href={tabPath(kind, p.view.homePath, tab)} aria-current={tab.id === p.view.tab.id ? 'page' : undefined}>
                {tab.label}
              </a>
            </li>
          ))}
        </ul>
      </nav>
    </div>
  );
};

const NamespacePage = (p: { view: NamespaceView }) => {
  const { viewer } = p.view.c.var;
  return (
    <Layout title={p.view.tab.id === 'overview' ? p.view.row.full_path : `${p.view.tab.label} · ${p.view.row.full_path}`} viewer={viewer} wide>
      <FlashNotice flash={p.view.flash} />
      <Header view={p.view} />
      {SECTIONS[p.view.tab.id].map((Section) => (
        <Section view={p.view} />
      ))}
    </Layout>
  );
};

/** The tab `tab` of the group or project `ref` (its full path), as the viewer may see it. */
export const namespacePage = async (c: Context<ConsoleEnv>, kind: Kind, ref: string, tab: Tab) => {
  const html = await withNamespace(c, kind, ref, async (target) => {
    const view = await loadView(c, kind, target, await takeFlash(c), tab);
    if (!TAB_SHOWN[tab.id](kind, view.standing)) return raise(problems.notFound());
    return (<NamespacePage view={view} />).toString();
  });
  return c.html(html);
};

/**
 * A group's or project's pages, defined once and mounted at `/groups` and `/projects` (as the
 * API's routes are): the group's tabs below its full path (`/groups/acme/sub`,
 * `/groups/acme/sub/-/group_members`), and its forms' actions under `/:id/-/`. An id, and a
 * project's `/projects/acme/website`, redirect to the page's address (`pagePathOf`; a project's
 * is served by top-level.tsx).
 */
export const namespacePages = (kind: Kind) => {
  const pages = new Hono<ConsoleEnv>();
  for (const actions of ACTIONS) pages.route('/', actions(kind));
  return pages.get('/:ref{.+}', async (c) => {
    const url = new URL(c.req.url);
    const { ref: path, tab } = splitTab(kind, c.req.param('ref'), url.searchParams);
    const ref = parseNamespaceId(path);
    if (typeof ref === 'string' && pagePathOf(kind, ref) === `/${kind.route}/${ref}`) return namespacePage(c, kind, ref, tab);
    // The id finds it; its full path is the address people share.
    const home = await withNamespace(c, kind, ref, async (target) => {
      await service.assertVisible(c.env, target);
      return pagePathOf(kind, (await service.describe(c.env, kind, target)).full_path);
    });
    return c.redirect(home + tab.suffix(kind) + url.search, typeof ref === 'number' ? 302 : 301);
  });
};
