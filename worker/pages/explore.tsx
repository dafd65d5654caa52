import { Hono } from 'hono';
import { KINDS, type Kind } from '../auth/policy';
import * as service from '../services/namespaces';
import { Pagination, pageNumber, Section, windowFor } from './components';
import { Layout } from './layout';
import { pagePathOf } from './namespace/view';
import type { ConsoleEnv, PageContext } from './viewer';

/** Groups or projects the viewer can see, matching the search (as `GET /groups?search=`). */
const Listing = async (p: { c: PageContext; kind: Kind; search: string }) => {
  const { c, kind } = p;
  const param = `${kind.route}_page`;
  const page = pageNumber(c.req.query(param));
  const viewer = c.var.caller;
  const { total, namespaces } = await service.listNamespaces(c.env, kind, { userId: viewer.id, admin: viewer.admin, search: p.search || undefined }, windowFor(page));
  return (
    <Section id={kind.route} title={`${kind.label}s (${total})`}>
      {namespaces.length === 0 ? (
        <p class="muted">No {kind.route} {p.search ? 'match' : 'yet'}.</p>
      ) : (
        <ul class="plain">
          {namespaces.map((row) => (
            <li>
              <a href={pagePathOf(kind, row.full_path)}>{row.full_name}</a> <span class="muted">{row.full_path} · {row.visibility}</span>
            </li>
          ))}
        </ul>
      )}
      <Pagination url={c.req.url} param={param} page={page} total={total} label={kind.route} />
    </Section>
  );
};

/** `/explore`: every group and project the viewer can see, to find one and ask for access. */
export const explorePages = new Hono<ConsoleEnv>().get('/explore', (c) => {
  const viewer = c.var.viewer;
  const search = (c.req.query('search') ?? '').slice(0, 255);
  return c.html(
    <Layout title="Explore" viewer={viewer} current="/explore" wide>
      <h1>Explore</h1>
      <form method="get" action="/explore" class="search" role="search">
        <label for="search">Search groups and projects</label>
        <input type="search" id="search" name="search" value={search} />
        <button type="submit">Search</button>
      </form>
      <Listing c={c} kind={KINDS.group} search={search} />
      <Listing c={c} kind={KINDS.project} search={search} />
    </Layout>,
  );
});
