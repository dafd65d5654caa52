import { Hono } from 'hono';
import { csrfTokenFor } from '../auth/session';
import type { PageEnv } from '../env';
import { Layout } from './layout';
import { STYLESHEET } from './style';

/** The landing page and the stylesheet. */
export const homePages = new Hono<PageEnv>()
  .get('/', (c) => {
    const session = c.var.session;
    if (!session) return c.redirect('/users/sign_in', 302);
    return c.html(
      <Layout title="Home" user={session.user} csrf={csrfTokenFor(c)}>
        <div class="card">
          <h1>Hello, {session.user.name}</h1>
          <p class="muted">You are signed in to Knock as @{session.user.username}.</p>
          <ul>
            <li>
              <a href="/oauth/authorized_applications">Authorized applications</a>
            </li>
            <li>
              <a href="/api/v4/openapi.json">API reference (OpenAPI)</a>
            </li>
          </ul>
        </div>
      </Layout>,
    );
  })
  .get('/assets/knock.css', (c) => c.body(STYLESHEET, 200, { 'Content-Type': 'text/css; charset=utf-8', 'Cache-Control': 'public, max-age=3600' }));
