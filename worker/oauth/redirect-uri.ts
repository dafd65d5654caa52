/**
 * Redirect URIs an application may register: absolute, no fragment (RFC 6749 §3.1.2), no
 * script-capable schemes. Custom schemes are allowed for native apps.
 */
export const isRegistrableRedirectUri = (value: string): boolean => {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return false;
  }
  if (url.hash || value.includes('#')) return false;
  return !['javascript:', 'data:', 'vbscript:', 'file:'].includes(url.protocol);
};

/**
 * A `backchannel_logout_uri` (OpenID Connect Back-Channel Logout 1.0 §2.2): an absolute http or
 * https URL without a fragment. Where it may lead is the URL guard's to judge (registration and
 * every delivery).
 */
export const isBackchannelLogoutUri = (value: string): boolean => {
  try {
    const url = new URL(value);
    return (url.protocol === 'https:' || url.protocol === 'http:') && !value.includes('#');
  } catch {
    return false;
  }
};

const isLoopback = (url: URL) => url.protocol === 'http:' && (url.hostname === '127.0.0.1' || url.hostname === '[::1]');

/**
 * Whether `requested` matches a registered URI: exact string match, except that the port of a
 * loopback `http://127.0.0.1` URI may vary (RFC 8252 §7.3).
 */
export const matchesRegisteredRedirectUri = (registered: readonly string[], requested: string): boolean => {
  if (registered.includes(requested)) return true;
  let want: URL;
  try {
    want = new URL(requested);
  } catch {
    return false;
  }
  if (!isLoopback(want)) return false;
  return registered.some((r) => {
    try {
      const have = new URL(r);
      return isLoopback(have) && have.hostname === want.hostname && have.pathname === want.pathname && have.search === want.search && !want.hash;
    } catch {
      return false;
    }
  });
};
