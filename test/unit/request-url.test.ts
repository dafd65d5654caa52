import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { originOf, pathnameOf } from '../../worker/request-url';

// What the runtime gives as request.url is a parsed and serialized URL: these must read it as
// `URL` would, whatever it holds.
const serialized = (raw: string): string | null => {
  try {
    return new URL(raw).href;
  } catch {
    return null;
  }
};

describe('origin and path of a request URL', () => {
  it('read as URL reads them', () => {
    const urls = [
      'https://knock.example/api/v4/user',
      'http://127.0.0.1:8787/api/v4/projects/acme%2Fweb/access_requests?per_page=20#top',
      'HTTPS://Knock.Example:443/.well-known/openid-configuration',
      'http://knock.example:8080',
      'https://user:secret@knock.example/a/b?c=d',
      'https://knock.example/a@b/c',
      'https://knock.example/?q=/x#/y',
      'https://[::1]:8443/x',
      'ftp://files.example/x',
      'file:///tmp/x',
    ];
    for (const raw of urls) {
      const url = serialized(raw)!;
      expect(originOf(url), url).toBe(new URL(url).origin);
      expect(pathnameOf(url), url).toBe(new URL(url).pathname);
    }
  });

  it('agree with URL on any web URL', () => {
    fc.assert(
      fc.property(fc.webUrl({ withQueryParameters: true, withFragments: true, authoritySettings: { withUserInfo: true, withPort: true, withIPv6: true } }), (raw) => {
        const url = serialized(raw);
        if (url === null) return;
        expect(originOf(url)).toBe(new URL(url).origin);
        expect(pathnameOf(url)).toBe(new URL(url).pathname);
      }),
      { numRuns: 100 },
    );
  });
});
