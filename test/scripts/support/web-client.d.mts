// Types of web-client.mjs (plain ESM, so the fixture's maker runs in Node without a build).
export type Api = (method: string, path: string, body?: unknown, expected?: number) => Promise<any>; // GitLab's JSON, read freely
export function api(baseUrl: () => string, token?: string): Api;
export function csrfOf(html: string): string;
export function consentFields(html: string): Record<string, string>;
export const BROWSER_ACCEPT: string;
export class WebBrowser {
  constructor(baseUrl: () => string, cookies?: Record<string, string>);
  readonly cookies: Map<string, string>;
  get(path: string): Promise<Response>;
  post(path: string, form: Record<string, string>): Promise<Response>;
  signIn(username: string, password: string, returnTo?: string): Promise<Response>;
  authorizeCode(clientId: string, redirectUri: string, state: string): Promise<string>;
}
export function rememberCookies(jar: Map<string, string>, res: Response): Response;
export function tokenEndpoint(baseUrl: string, body: Record<string, string>): Promise<{ access_token: string; refresh_token: string }>;
