import type { Child } from 'hono/jsx';
import type { UserRow } from '../durable/directory';

export const Layout = (props: { title: string; user?: UserRow | null; csrf?: string; wide?: boolean; children: Child }) => (
  <html lang="en">
    <head>
      <meta charset="utf-8" />
      <meta name="viewport" content="width=device-width, initial-scale=1" />
      <title>{`${props.title} · Knock`}</title>
      <link rel="stylesheet" href="/assets/knock.css" />
    </head>
    <body>
      <header class="top">
        <a class="brand" href="/">Knock</a>
        {props.user && props.csrf ? (
          <form class="inline" method="post" action="/users/sign_out">
            <input type="hidden" name="authenticity_token" value={props.csrf} />
            <span class="muted">@{props.user.username} </span>
            <button type="submit">Sign out</button>
          </form>
        ) : null}
      </header>
      <main class={props.wide ? 'wide' : ''}>{props.children}</main>
    </body>
  </html>
);

export const ErrorNotice = (props: { message?: string | null }) =>
  props.message ? (
    <div class="error" role="alert">
      {props.message}
    </div>
  ) : null;

export const CsrfField = (props: { token: string }) => <input type="hidden" name="authenticity_token" value={props.token} />;
