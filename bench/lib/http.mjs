// Small fetch helpers for the set-up phase (not measured): JSON calls, and a browser-like
// client with a cookie jar for Knock's sign-in and consent pages.

export async function call(url, { method = 'GET', token, body, form, headers = {}, expect } = {}) {
  const init = { method, headers: { ...headers }, redirect: 'manual' };
  if (token) init.headers['PRIVATE-TOKEN'] = token;
  if (body !== undefined) {
    init.headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  } else if (form !== undefined) {
    init.headers['Content-Type'] = 'application/x-www-form-urlencoded';
    init.body = new URLSearchParams(form).toString();
  }
  const res = await fetch(url, init);
  const text = await res.text();
  let json = null;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {}
  if (expect !== undefined && ![].concat(expect).includes(res.status)) {
    throw new Error(`${method} ${url} → ${res.status} (expected ${expect}): ${text.slice(0, 300)}`);
  }
  return { status: res.status, headers: res.headers, text, json };
}

/** A browser: keeps cookies, sends Origin on POSTs (Knock's pages check it), never follows redirects. */
export class Browser {
  constructor(origin) {
    this.origin = origin;
    this.cookies = new Map();
  }

  get cookieHeader() {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  async request(path, { method = 'GET', form } = {}) {
    const headers = { cookie: this.cookieHeader };
    let body;
    if (form) {
      headers['Content-Type'] = 'application/x-www-form-urlencoded';
      headers.Origin = this.origin;
      body = new URLSearchParams(form).toString();
    }
    const res = await fetch(this.origin + path, { method, headers, body, redirect: 'manual' });
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      if (value === '' || /max-age=0/i.test(line)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    return { status: res.status, location: res.headers.get('location'), text: await res.text() };
  }
}

/** The hidden fields of the first form on an HTML page. */
export const formFields = (html) => {
  const fields = {};
  for (const m of html.matchAll(/<input[^>]*>/g)) {
    const name = /name="([^"]*)"/.exec(m[0])?.[1];
    const value = /value="([^"]*)"/.exec(m[0])?.[1] ?? '';
    if (name && /type="hidden"/.test(m[0])) fields[name] = value.replace(/&amp;/g, '&').replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>');
  }
  return fields;
};
