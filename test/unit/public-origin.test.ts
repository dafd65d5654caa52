import { describe, expect, it } from 'vitest';
import { publicOrigin } from '../../worker/config';
import type { Env } from '../../worker/env';

const env = (PUBLIC_URL = '') => ({ PUBLIC_URL }) as Env;

// The origin of RFC 6454 §6.1, as WHATWG URL's `origin` serialises it: read from the request's own
// URL when PUBLIC_URL is unset.
describe('publicOrigin', () => {
  it.each([
    'http://127.0.0.1:8787/api/v4/user',
    'https://knock.example/api/v4/projects/1/access_requests?per_page=20',
    'https://knock.example/',
    'https://knock.example',
    'http://[::1]:8787/oauth/token',
    'https://user:secret@knock.example/api/v4/user',
    'https://knock.example:443/x',
    'HTTPS://Knock.Example/x',
    'https://Knock.Example/x',
    'http://knock.example:80/',
    'http://knock.example:08787/',
    'http://knock.example:65535/',
    'https://knock.example?x=/y',
    'https://knock.example#a/b',
  ])('of %s is the URL standard origin', (url) => {
    expect(publicOrigin(env(), url)).toBe(new URL(url).origin);
  });

  it('is PUBLIC_URL without trailing slashes when configured', () => {
    expect(publicOrigin(env('https://knock.example/'), 'http://127.0.0.1:8787/api/v4/user')).toBe('https://knock.example');
  });
});
