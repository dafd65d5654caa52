import { describe, expect, it } from 'vitest';
import { isRegistrableRedirectUri, matchesRegisteredRedirectUri } from '../../worker/oauth/redirect-uri';

describe('registering a redirect URI', () => {
  it.each(['https://app.example/callback', 'http://127.0.0.1/cb', 'com.example.app:/oauth2redirect', 'https://app.example/cb?tenant=1'])(
    'accepts %s',
    (uri) => expect(isRegistrableRedirectUri(uri)).toBe(true),
  );

  // RFC 6749 §3.1.2: absolute, and no fragment; script-capable schemes are never a redirect target.
  it.each(['/callback', 'not a uri', 'https://app.example/cb#frag', 'https://app.example/cb#', 'javascript:alert(1)', 'data:text/html,x', 'file:///etc/passwd', 'vbscript:x'])(
    'refuses %j',
    (uri) => expect(isRegistrableRedirectUri(uri)).toBe(false),
  );
});

describe('matching a requested redirect URI', () => {
  it('matches a registered URI exactly', () => {
    expect(matchesRegisteredRedirectUri(['https://a.example/cb', 'https://app.example/cb'], 'https://app.example/cb')).toBe(true);
  });

  it('refuses anything else for a non-loopback URI: port, path, query, case, trailing slash', () => {
    const registered = ['https://app.example/cb'];
    for (const requested of ['https://app.example:8443/cb', 'https://app.example/cb/', 'https://app.example/cb?x=1', 'https://App.example/cb', 'https://app.example/other']) {
      expect(matchesRegisteredRedirectUri(registered, requested)).toBe(false);
    }
  });

  // RFC 8252 §7.3: a native app's loopback redirect may use any port.
  it('a loopback redirect URI may differ only in port', () => {
    expect(matchesRegisteredRedirectUri(['http://127.0.0.1/cb'], 'http://127.0.0.1:51234/cb')).toBe(true);
    expect(matchesRegisteredRedirectUri(['http://127.0.0.1:8000/cb'], 'http://127.0.0.1:9000/cb')).toBe(true);
    expect(matchesRegisteredRedirectUri(['http://[::1]/cb'], 'http://[::1]:4000/cb')).toBe(true);

    expect(matchesRegisteredRedirectUri(['http://127.0.0.1/cb'], 'http://127.0.0.1:51234/other')).toBe(false);
    expect(matchesRegisteredRedirectUri(['http://127.0.0.1/cb?a=1'], 'http://127.0.0.1:51234/cb?a=2')).toBe(false);
    expect(matchesRegisteredRedirectUri(['http://127.0.0.1/cb'], 'http://[::1]:51234/cb')).toBe(false);
    expect(matchesRegisteredRedirectUri(['http://127.0.0.1/cb'], 'http://127.0.0.1:51234/cb#x')).toBe(false);
  });

  it('gives the port freedom only to http on a loopback IP literal (RFC 8252 §8.3: not "localhost")', () => {
    expect(matchesRegisteredRedirectUri(['https://127.0.0.1/cb'], 'https://127.0.0.1:51234/cb')).toBe(false);
    expect(matchesRegisteredRedirectUri(['http://localhost/cb'], 'http://localhost:51234/cb')).toBe(false);
    expect(matchesRegisteredRedirectUri(['http://127.0.0.1.evil.example/cb'], 'http://127.0.0.1.evil.example:1/cb')).toBe(false);
  });

  it('matches nothing when nothing is registered, or when the request is not a URI', () => {
    expect(matchesRegisteredRedirectUri([], 'http://127.0.0.1/cb')).toBe(false);
    expect(matchesRegisteredRedirectUri(['http://127.0.0.1/cb'], 'not a uri')).toBe(false);
  });
});
