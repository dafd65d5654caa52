// A small client of a running Knock server: the API with a token, and a browser that keeps
// cookies and submits the pages' forms with their CSRF token. Its page helpers (cookies, a form's
// CSRF token, the consent form's fields) are shared with the soak's workload (soak-workload.mjs)
// and the worker project's `Browser` (test/worker/support/http.ts).

/** `/api/v4` with `PRIVATE-TOKEN` (or none); throws unless the status is the expected one. */
export const api = (baseUrl, token) => async (method, path, body, expected) => {
  const res = await fetch(`${baseUrl()}/api/v4${path}`, {
    method,
    headers: { ...(token ? { 'PRIVATE-TOKEN': token } : {}), ...(body ? { 'Content-Type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
    signal: AbortSignal.timeout(20_000),
  });
  const text = await res.text();
  const ok = expected === undefined ? res.ok : res.status === expected;
  if (!ok) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : null;
};

/** The authenticity_token of the (first) form in a page. */
export const csrfOf = (html) => {
  const m = /name="authenticity_token" value="([^"]+)"/.exec(html);
  if (!m) throw new Error(`no authenticity_token in page:\n${html.slice(0, 500)}`);
  return m[1];
};

/** The hidden fields of the consent form, as a browser would submit them. */
export const consentFields = (html) => {
  const form = /<form method="post" action="\/login\/oauth\/authorize">([\s\S]*?)<\/form>/.exec(html);
  if (!form) throw new Error(`no consent form in page:\n${html.slice(0, 500)}`);
  const decode = (s) => s.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
  return Object.fromEntries([...form[1].matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"/g)].map((m) => [m[1], decode(m[2])]));
};

/** What Chromium sends with a navigation or a form's submission. */
export const BROWSER_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';

/** A browser: keeps cookies, sends Origin on form posts, never follows redirects. */
export class WebBrowser {
  /** @param {() => string} baseUrl the server's address, read on every request */
  constructor(baseUrl, cookies = {}) {
    this.baseUrl = baseUrl;
    this.cookies = new Map(Object.entries(cookies));
  }

  async get(path) {
    return this.record(await fetch(`${this.baseUrl()}${path}`, { headers: { Accept: BROWSER_ACCEPT, Cookie: this.cookieHeader() }, redirect: 'manual' }));
  }

  async post(path, form) {
    return this.record(
      await fetch(`${this.baseUrl()}${path}`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded', Accept: BROWSER_ACCEPT, Origin: this.baseUrl(), Cookie: this.cookieHeader() },
        body: new URLSearchParams(form).toString(),
      }),
    );
  }

  /** Submits the sign-in page; answers the response (303 when signed in, the page with the reason otherwise). */
  async signIn(username, password, returnTo = '/') {
    const page = await this.get(`/users/sign_in?return_to=${encodeURIComponent(returnTo)}`);
    const authenticity_token = csrfOf(await page.text());
    return this.post('/users/sign_in', { username, password, authenticity_token, return_to: returnTo });
  }

  /** authorize → consent → Authorize for a signed-in browser; the code of the redirect. */
  async authorizeCode(clientId, redirectUri, state) {
    const q = new URLSearchParams({ client_id: clientId, redirect_uri: redirectUri, response_type: 'code', scope: 'api', state });
    let res = await this.get(`/login/oauth/authorize?${q}`);
    if (res.status === 200) {
      const html = await res.text();
      res = await this.post('/login/oauth/authorize', { ...consentFields(html), authenticity_token: csrfOf(html), decision: 'authorize' });
    }
    const location = new URL(res.headers.get('Location') ?? 'about:blank');
    const code = location.searchParams.get('code');
    if (!code || location.searchParams.get('state') !== state) throw new Error(`authorize: ${res.status} ${location.href}`);
    return code;
  }

  cookieHeader() {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  record(res) {
    return rememberCookies(this.cookies, res);
  }
}

/** Keeps the cookies a response sets in `jar` (a cookie cleared by Max-Age=0 or an empty value is removed); answers the response. */
export const rememberCookies = (jar, res) => {
  for (const line of res.headers.getSetCookie()) {
    const [pair] = line.split(';');
    const eq = pair.indexOf('=');
    const name = pair.slice(0, eq).trim();
    const value = pair.slice(eq + 1);
    if (/max-age=0/i.test(line) || value === '') jar.delete(name);
    else jar.set(name, value);
  }
  return res;
};

/** POST /login/oauth/access_token with a JSON body; the parsed answer (throws unless 200). */
export const tokenEndpoint = async (baseUrl, body) => {
  const res = await fetch(`${baseUrl}/login/oauth/access_token`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`token endpoint (${body.grant_type}): ${res.status} ${text}`);
  return JSON.parse(text);
};
