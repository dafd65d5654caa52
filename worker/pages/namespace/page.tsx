import { Hono, type Context } from 'hono';
import type { FC } from 'hono/jsx';
import { accessLevelName } from '../../../shared/access-levels';
import { parseNamespaceId, withNamespace } from '../../services/finder';
import { effectiveLevel, KINDS, type Kind, type Standing } from '../../auth/policy';
import * as service from '../../services/namespaces';
import { FlashNotice } from '../components';
import { takeFlash } from '../flash';
import { Layout } from '../layout';
import type { ConsoleEnv } from '../viewer';
import { accessRequestActions, PendingRequests, YourAccess } from './access-requests';
import { AuditLog } from './audit-log';
import { hookActions, Webhooks } from './hooks';
import { memberActions, Members } from './members';
import { Settings, settingsActions } from './settings';
import { loadView, pagePathOf, type NamespaceView } from './view';

/**
 * The sections of a group's or project's page, in order. Each is one component over the view:
 * it loads what it shows through the services and renders nothing for a viewer the policy
 * does not allow. A new section is one more entry here, with its forms' routes in `ACTIONS`.
 */
const SECTIONS: FC<{ view: NamespaceView }>[] = [YourAccess, PendingRequests, Members, Settings, Webhooks, AuditLog];

/** The forms' routes of the sections above, each built for a kind. */
const ACTIONS = [accessRequestActions, memberActions, settingsActions, hookActions];

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
    </div>
  );
};

const NamespacePage = (p: { view: NamespaceView }) => {
  const { viewer } = p.view.c.var;
  return (
    <Layout title={p.view.row.full_path} user={viewer.user} csrf={viewer.csrf} wide>
      <FlashNotice flash={p.view.flash} />
      <Header view={p.view} />
      {SECTIONS.map((Section) => (
        <Section view={p.view} />
      ))}
    </Layout>
  );
};

/** The page of the group or project `ref` (its full path), as the viewer may see it. */
export const namespacePage = async (c: Context<ConsoleEnv>, kind: Kind, ref: string) => {
  const html = await withNamespace(c, kind, ref, async (target) => (<NamespacePage view={await loadView(c, kind, target, await takeFlash(c))} />).toString());
  return c.html(html);
};

/**
 * A group's or project's pages, defined once and mounted at `/groups` and `/projects` (as the
 * API's routes are): the group's page at its full path (`/groups/acme/sub`), and its forms'
 * actions under `/:id/-/`. An id, and a project's `/projects/acme/website`, redirect to the
 * page's address (`pagePathOf`; a project's is served by top-level.tsx).
 */
export const namespacePages = (kind: Kind) => {
  const pages = new Hono<ConsoleEnv>();
  for (const actions of ACTIONS) pages.route('/', actions(kind));
  return pages.get('/:ref{.+}', async (c) => {
    const ref = parseNamespaceId(c.req.param('ref'));
    if (typeof ref === 'string' && pagePathOf(kind, ref) === `/${kind.route}/${ref}`) return namespacePage(c, kind, ref);
    // The id finds it; its full path is the address people share.
    const path = await withNamespace(c, kind, ref, async (target) => {
      await service.assertVisible(c.env, target);
      return pagePathOf(kind, (await service.describe(c.env, kind, target)).full_path);
    });
    return c.redirect(path + new URL(c.req.url).search, typeof ref === 'number' ? 302 : 301);
  });
};
