/**
 * The origin and path of a request's URL, read off the string the runtime gives as `request.url`.
 * That string is a URL the runtime already parsed and serialized (WHATWG URL Standard §4.5: host
 * lower-cased, default port dropped, path percent-encoded), so for an `http:` or `https:` URL
 * without credentials its origin is everything before the path's first `/`, and its path runs to
 * the first `?` or `#`. These run on every request (the published documents' check, every answer
 * that names the public origin); anything else is left to `URL`.
 */
const authorityStart = (url: string): number => (url.startsWith('https://') ? 8 : url.startsWith('http://') ? 7 : -1);

/** Where the path starts, or -1 when the URL is not a plain `http:`/`https:` one without credentials. */
const pathStart = (url: string): number => {
  const from = authorityStart(url);
  if (from < 0) return -1;
  const slash = url.indexOf('/', from);
  if (slash < 0 || url.lastIndexOf('@', slash) >= from) return -1;
  return slash;
};

/** `new URL(url).origin` (RFC 6454 §6.1's serialization), without parsing the URL again. */
export const originOf = (url: string): string => {
  const slash = pathStart(url);
  return slash < 0 ? new URL(url).origin : url.slice(0, slash);
};

/** `new URL(url).pathname`, without parsing the URL again. */
export const pathnameOf = (url: string): string => {
  const slash = pathStart(url);
  if (slash < 0) return new URL(url).pathname;
  let end = url.length;
  for (let i = slash; i < url.length; i++) {
    const ch = url.charCodeAt(i);
    if (ch === 63 /* ? */ || ch === 35 /* # */) {
      end = i;
      break;
    }
  }
  return url.slice(slash, end);
};
