import { Browser, createUser, type TestUser } from './http';
import { signedInBrowser } from './world';

/** A user who can sign in to the console (a password) and call the API (a token), with a name. */
export interface ConsoleUser extends TestUser {
  name: string;
}

export const consoleUser = async (prefix = 'c', opts: { admin?: boolean } = {}): Promise<ConsoleUser> => {
  const user = await createUser(prefix, opts);
  return { ...user, name: `User ${user.username}` };
};

/** A browser signed in to the console as `user`, with the CSRF token of its session. */
export const consoleSession = async (user: TestUser): Promise<{ browser: Browser; csrf: string }> => signedInBrowser(user);

/** Text of a page as people read it: tags dropped, entities decoded, spaces folded. */
export const textOf = (html: string): string =>
  html
    .replace(/<[^>]+>/g, ' ')
    .replace(/&#39;/g, "'")
    .replace(/&quot;/g, '"')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&')
    .replace(/\s+/g, ' ')
    .trim();

/** The flash notice of a page, if any. */
export const noticeOf = (html: string): string | null => {
  const m = /<div class="notice" role="status">([\s\S]*?)<\/div>/.exec(html);
  return m ? textOf(m[1]) : null;
};

/** The errors shown beside fields (or forms) of a page. */
export const fieldErrorsOf = (html: string): string[] => [...html.matchAll(/<p class="field-error"[^>]*>([\s\S]*?)<\/p>/g)].map((m) => textOf(m[1]));

/** Submits a console form and follows its redirects (POST-redirect-GET), as a browser does. */
export const submit = async (browser: Browser, action: string, fields: Record<string, string | string[]>) => {
  const res = await browser.post(action, fields);
  if (res.status !== 303) return { res, page: null, html: await res.text() };
  let page = res;
  for (let hops = 0; page.status >= 300 && page.status < 400; hops++) {
    const location = page.headers.get('location');
    if (!location || hops > 3) throw new Error(`redirect without Location, or a loop, from ${action}`);
    page = await browser.get(location);
  }
  return { res, page, html: await page.text() };
};
