import { Hono, type Context } from 'hono';
import { loadSession } from '../auth/session';
import { KINDS } from '../auth/policy';
import { directory } from '../durable/directory/directory';
import type { UserRow } from '../durable/directory/types';
import { ApiError } from '../errors';
import { withNamespace } from '../services/finder';
import * as service from '../services/namespaces';
import { When } from './components';
import { notFoundPage, pageError } from './error-page';
import { Layout } from './layout';
import { namespacePage } from './namespace/page';
import { pagePathOf, splitTab } from './namespace/view';
import { requireViewer, type ConsoleEnv } from './viewer';

/** Whether a request is a browser asking for a page (GitLab decides by the same header). */
export const wantsPage = (c: Context): boolean => (c.req.header('Accept') ?? '').includes('text/html');

/** Runs `find`, answering null when it raised a 404 (not there, or not visible to the viewer). */
const orNull = async <T,>(find: () => Promise<T>): Promise<T | null> => {
  try {
    return await find();
  } catch (e) {
    if (e instanceof ApiError && e.status === 404) return null;
    throw e;
  }
};

/** A user's page at `/:username`, their `web_url`: who they are, and since when. */
const UserPage = (p: { c: Context<ConsoleEnv>; user: UserRow }) => {
  const { viewer } = p.c.var;
  const u = p.user;
  return (
    <Layout title={`${u.name} (@${u.username})`} viewer={viewer}>
      <div class="card">
        <h1>{u.name}</h1>
        <p class="muted">@{u.username}</p>
        <dl class="facts">
          <dt>Member since</dt>
          <dd>
            <When iso={u.created_at} />
          </dd>
          {u.state !== 'active' ? (
            <>
              <dt>State</dt>
              <dd>{u.state}</dd>
            </>
          ) : null}
        </dl>
        {viewer.user.admin ? (
          <p>
            <a href={`/admin/users/${u.id}`}>Manage @{u.username} in Administration</a>
          </p>
        ) : null}
      </div>
    </Layout>
  );
};

/**
 * GitLab's top-level addresses, which come after every reserved route (as in GitLab's
 * config/routes.rb): a project's page at its full path (`/acme/website`), a user's at
 * `/:username`, and a group's full path redirected to `/groups/...`. `reserved` says which first
 * segments belong to other routes (`/api`, `/users`, `/-`, ...): nothing is looked up under them.
 * Anything else a browser asks for is the 404 page, with the header and a way back.
 */
export const topLevelPages = (reserved: (segment: string) => boolean) => {
  const pages = new Hono<ConsoleEnv>();
  pages.use('*', loadSession);
  pages.get('/:path{.+}', async (c, next) => (reserved(c.req.param('path').split('/')[0]!) ? notFoundPage(c) : next()), requireViewer, async (c) => {
    const path = c.req.param('path').replace(/\/+$/, '');
    const { ref, tab } = splitTab(KINDS.project, path, new URL(c.req.url).searchParams);
    const project = await orNull(() => namespacePage(c, KINDS.project, ref, tab));
    if (project) return project;
    if (path.split('/').includes('-')) return notFoundPage(c);
    if (!path.includes('/')) {
      const user = await directory(c.env).findUserByUsername(path);
      if (user) return c.html(<UserPage c={c} user={user} />);
    }
    const group = await orNull(() =>
      withNamespace(c, KINDS.group, path, async (target) => {
        await service.assertVisible(c.env, target);
        return (await service.describe(c.env, KINDS.group, target)).full_path;
      }),
    );
    if (group) return c.redirect(pagePathOf(KINDS.group, group) + new URL(c.req.url).search, 301);
    return notFoundPage(c);
  });
  pages.all('*', notFoundPage);
  pages.onError(pageError);
  return pages;
};
