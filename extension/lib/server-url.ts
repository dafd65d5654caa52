// The server URL typed in the options page, reduced to the origin the extension talks to.

/** RFC 8252 §8.3: a server on this machine may be reached over plain http. */
const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** Whether `serverUrl` names this machine (URL hostnames keep IPv6's brackets: `[::1]`). */
export function isLoopback(serverUrl: string): boolean {
  return LOOPBACK_HOSTS.has(new URL(serverUrl).hostname);
}

/** `https://knock.example/anything` → `https://knock.example`; throws a readable error otherwise. */
export function normalizeServerUrl(input: string): string {
  let url: URL;
  try {
    url = new URL(input.trim());
  } catch {
    throw new Error('Enter the full address of your Knock server, e.g. https://knock.example.com');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new Error('The server address must start with https:// (or http:// for a local server).');
  }
  if (url.protocol === 'http:' && !isLoopback(url.href)) {
    throw new Error('The server address must start with https:// (http:// only for 127.0.0.1, localhost or [::1]).');
  }
  return url.origin;
}

/**
 * The match pattern of the host permission that lets the extension reach `serverUrl`: its scheme
 * and host, without the port. A match pattern without a port matches every port in both browsers,
 * but only Chromium accepts a pattern with one: in Firefox, `http://127.0.0.1:8787/*` is not
 * covered by the `http://127.0.0.1/*` granted at install, so asking about it would prompt.
 */
export function hostPattern(serverUrl: string): string {
  const url = new URL(serverUrl);
  return `${url.protocol}//${url.hostname}/*`;
}

/** What to call a server on screen: its host, with the port (`127.0.0.1:8787`, `knock.example`). */
export const serverName = (serverUrl: string): string => new URL(serverUrl).host;
