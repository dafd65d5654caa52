import { raw } from 'hono/html';
import type { Child } from 'hono/jsx';
import type { UserRow } from '../durable/directory/types';
import { WAITING_CAP } from '../durable/user/inbox';

/** The console's main navigation; Administration only for administrators. */
const NAV: { href: string; label: string; admin?: boolean }[] = [
  { href: '/', label: 'Dashboard' },
  { href: '/explore', label: 'Explore' },
  { href: '/-/profile', label: 'Account' },
  { href: '/admin/users', label: 'Administration', admin: true },
];

/** Who the header is for: their name, the sign-out form's CSRF token, and how many requests wait for them. */
interface HeaderViewer {
  user: UserRow;
  csrf: string;
  waiting?: number;
}

/**
 * "3 waiting", a link to the dashboard's inbox, when requests wait for the viewer. Not for
 * administrators: their inbox is every request, read from every index partition, which no page
 * but the dashboard pays for.
 */
const Waiting = (p: { viewer: HeaderViewer }) =>
  !p.viewer.user.admin && p.viewer.waiting ? (
    <a class="waiting" href="/#inbox">
      <span class="count">{p.viewer.waiting >= WAITING_CAP ? `${WAITING_CAP - 1}+` : p.viewer.waiting}</span> waiting<span class="visually-hidden"> for you to answer</span>
    </a>
  ) : null;

/** Every page in standards mode (HTML's `<!DOCTYPE html>`; without it browsers render in quirks mode). */
export const Layout = (props: { title: string; viewer?: HeaderViewer | null; wide?: boolean; current?: string; children: Child }) => (
  <>
    {raw('<!DOCTYPE html>')}
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>{`${props.title} · Knock`}</title>
        <link rel="stylesheet" href="/assets/knock.css" />
      </head>
      <body>
        <a class="skip" href="#content">
          Skip to content
        </a>
        <header class="top">
          <a class="brand" href="/">
            Knock
          </a>
          {props.viewer ? (
            <>
              <nav aria-label="Main">
                <ul>
                  {NAV.filter((n) => !n.admin || props.viewer?.user.admin).map((n) => (
                    <li>
                      <a href={n.href} aria-current={props.current === n.href ? 'page' : undefined}>
                        {n.label}
                      </a>
                    </li>
                  ))}
                </ul>
              </nav>
              <Waiting viewer={props.viewer} />
              <form class="inline" method="post" action="/users/sign_out">
                <input type="hidden" name="authenticity_token" value={props.viewer.csrf} />
                <span class="muted">@{props.viewer.user.username} </span>
                <button type="submit">Sign out</button>
              </form>
            </>
          ) : null}
        </header>
        <main id="content" class={props.wide ? 'wide' : ''}>
          {props.children}
        </main>
      </body>
    </html>
  </>
);

export const ErrorNotice = (props: { message?: string | null }) =>
  props.message ? (
    <div class="error" role="alert">
      {props.message}
    </div>
  ) : null;

export const CsrfField = (props: { token: string }) => <input type="hidden" name="authenticity_token" value={props.token} />;
