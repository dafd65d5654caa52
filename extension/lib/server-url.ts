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

/** The match pattern a host permission is asked for. */
export function originPattern(serverUrl: string): string {
  return `${new URL(serverUrl).origin}/*`;
}
