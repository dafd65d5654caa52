import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { Layout } from './layout';

/** An HTML error page (never a redirect): bad OAuth clients, CSRF failures and the like. */
export const errorPage = (c: Context, status: ContentfulStatusCode, title: string, detail: string) =>
  c.html(
    <Layout title={title}>
      <div class="card">
        <h1>{title}</h1>
        <p>{detail}</p>
      </div>
    </Layout>,
    status,
  );
