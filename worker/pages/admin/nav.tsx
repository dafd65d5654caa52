import type { Child } from 'hono/jsx';
import type { Viewer } from '../viewer';
import { Layout } from '../layout';

/** The administration area's pages: users and OAuth applications. */
const AREAS = [
  { href: '/admin/users', label: 'Users' },
  { href: '/admin/applications', label: 'Applications' },
];

/** A page of the administration area, with its own navigation. */
export const AdminLayout = (p: { title: string; viewer: Viewer; area: string; children: Child }) => (
  <Layout title={p.title} viewer={p.viewer} current="/admin/users" wide>
    <nav class="tabs" aria-label="Administration">
      <ul>
        {AREAS.map((a) => (
          <li>
            <a href={a.href} aria-current={a.href === p.area ? 'page' : undefined}>
              {a.label}
            </a>
          </li>
        ))}
      </ul>
    </nav>
    {p.children}
  </Layout>
);
