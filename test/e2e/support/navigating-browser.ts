// A browser without a browser, for journeys across servers on 127.0.0.1 (Knock and a relying
// party): one cookie jar, redirects followed by hand, Knock's sign-in and consent pages answered
// as a person would.
import { request as httpRequest } from 'node:http';
import { BROWSER_ACCEPT, consentFields, csrfOf } from '../../scripts/support/web-client.mjs';

/** What a request got back. */
export interface Answer {
  status: number;
  location: string | null;
  body: string;
}

/**
 * A browser: one cookie jar for every origin on 127.0.0.1, redirects followed by hand. Requests go
 * through node:http, not fetch: fetch says `Sec-Fetch-Mode: cors`, which mod_auth_openidc answers
 * with 401 (a script's request) instead of sending it to sign in; a browser's navigation says
 * `navigate`.
 */
export class NavigatingBrowser {
  readonly jar = new Map<string, string>();

  request(url: string, form?: Record<string, string>): Promise<Answer> {
    const body = form ? new URLSearchParams(form).toString() : undefined;
    const headers: Record<string, string> = {
      Accept: BROWSER_ACCEPT,
      'Sec-Fetch-Mode': 'navigate',
      'Sec-Fetch-Dest': 'document',
      Cookie: [...this.jar].map(([k, v]) => `${k}=${v}`).join('; '),
      ...(body !== undefined && { 'Content-Type': 'application/x-www-form-urlencoded', Origin: new URL(url).origin, 'Content-Length': String(Buffer.byteLength(body)) }),
    };
    return new Promise((resolve, reject) => {
      const req = httpRequest(url, { method: form ? 'POST' : 'GET', headers, timeout: 20_000 }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => {
          for (const line of res.headers['set-cookie'] ?? []) {
            const pair = line.split(';')[0] ?? '';
            const eq = pair.indexOf('=');
            const name = pair.slice(0, eq).trim();
            const value = pair.slice(eq + 1);
            if (/max-age=0/i.test(line) || /expires=Thu, 01 Jan 1970/i.test(line) || value === '') this.jar.delete(name);
            else this.jar.set(name, value);
          }
          resolve({ status: res.statusCode ?? 0, location: res.headers.location ?? null, body: text });
        });
      });
      req.on('error', reject);
      req.on('timeout', () => req.destroy(new Error(`no answer from ${url}`)));
      req.end(body);
    });
  }

  /**
   * Opens `url` and goes where it leads, as a person would: Knock's sign-in page gets the
   * credentials, its consent page Authorize. Answers the last response and where it was.
   */
  async open(url: string, who: { username: string; password: string }): Promise<Answer & { url: string }> {
    let res = await this.request(url);
    for (let hops = 0; hops < 12; hops++) {
      if (res.status >= 300 && res.status < 400 && res.location) {
        url = new URL(res.location, url).href;
        res = await this.request(url);
        continue;
      }
      const page = new URL(url);
      if (res.status === 200 && page.pathname === '/users/sign_in') {
        res = await this.request(new URL('/users/sign_in', url).href, {
          username: who.username,
          password: who.password,
          authenticity_token: csrfOf(res.body),
          return_to: page.searchParams.get('return_to') ?? '/',
        });
      } else if (res.status === 200 && res.body.includes('action="/login/oauth/authorize"')) {
        res = await this.request(new URL('/login/oauth/authorize', url).href, { ...consentFields(res.body), authenticity_token: csrfOf(res.body), decision: 'authorize' });
      } else return { ...res, url };
    }
    throw new Error(`too many redirects from ${url}`);
  }

  /** Closes the browser's Apache session cookie (as quitting the browser does); Knock's session stays. */
  forgetApacheSession(): void {
    for (const name of this.jar.keys()) if (name.startsWith('mod_auth_openidc')) this.jar.delete(name);
  }
}

