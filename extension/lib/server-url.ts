// The server URL typed in the options page, reduced to the origin the extension talks to.

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
  return url.origin;
}

/** The match pattern a host permission is asked for. */
export function originPattern(serverUrl: string): string {
  return `${new URL(serverUrl).origin}/*`;
}
