/**
 * Where a webhook may be sent (GitLab's `Gitlab::UrlBlocker`, with its wording): http and https
 * only, and never to this machine or its networks unless local development allows it. Checked
 * when a hook is saved and again before every delivery, so a hook saved while local addresses
 * were allowed is not sent anywhere once they are not.
 *
 * Only addresses written in the URL are judged: a Worker cannot resolve names itself. Deployed
 * on Cloudflare this is enough, as a Worker's fetch reaches only the public internet; locally,
 * a name that resolves to a private address is not caught (see docs/webhooks.md).
 */

/** Why `url` is refused (GitLab's message after "Url is blocked: "), or null when it may be used. */
export const blockedReason = (url: string, allowLocal: boolean): string | null => {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'Only allowed schemes are http, https';
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return 'Only allowed schemes are http, https';
  if (allowLocal) return null;
  const host = parsed.hostname.toLowerCase().replace(/\.$/, '');
  if (host === 'localhost' || host.endsWith('.localhost')) return 'Requests to localhost are not allowed';
  // The URL parser has already normalised IPv4 in any notation (0x7f.1, 2130706433) to dotted
  // decimal, and IPv6 to its bracketed compressed form.
  const v4 = parseIpv4(host);
  if (v4) return ipv4Reason(v4);
  if (host.startsWith('[') && host.endsWith(']')) return ipv6Reason(host.slice(1, -1));
  return null;
};

const parseIpv4 = (host: string): number[] | null => {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(host);
  return m ? m.slice(1).map(Number) : null;
};

/** RFC 6890's special-purpose IPv4 ranges that lead back inside. */
const ipv4Reason = ([a, b, c, d]: number[]): string | null => {
  if (a === 0) return 'Requests to localhost are not allowed';
  if (a === 127) return 'Requests to loopback addresses are not allowed';
  if (a === 10 || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168)) return 'Requests to the local network are not allowed';
  // RFC 6598 shared address space (carrier-grade NAT), also not the public internet.
  if (a === 100 && b >= 64 && b <= 127) return 'Requests to the local network are not allowed';
  if (a === 169 && b === 254) return 'Requests to the link local network are not allowed';
  if (a === 255 && b === 255 && c === 255 && d === 255) return 'Requests to the limited broadcast address are not allowed';
  if (a >= 224) return 'Requests to the local network are not allowed';
  return null;
};

/** The sixteen bytes of an IPv6 address as `URL` writes it (compressed, maybe with a dotted tail). */
const ipv6Bytes = (text: string): number[] | null => {
  const [head, tail = null] = text.split('::');
  if (text.split('::').length > 2) return null;
  const groups = (part: string | null) => (part ? part.split(':') : []);
  const words = (parts: string[]): number[] =>
    parts.flatMap((p) => {
      const v4 = parseIpv4(p);
      if (v4) return [(v4[0] << 8) | v4[1], (v4[2] << 8) | v4[3]];
      return [parseInt(p, 16)];
    });
  const left = words(groups(head));
  const right = words(groups(tail));
  const fill = tail === null ? [] : Array(8 - left.length - right.length).fill(0);
  const all = [...left, ...fill, ...right];
  if (all.length !== 8 || all.some((w) => !Number.isInteger(w) || w < 0 || w > 0xffff)) return null;
  return all.flatMap((w) => [w >> 8, w & 0xff]);
};

/** RFC 4291 loopback and unspecified, RFC 4193 unique local, link-local; IPv4-mapped as IPv4. */
const ipv6Reason = (text: string): string | null => {
  const bytes = ipv6Bytes(text);
  if (!bytes) return 'Requests to the local network are not allowed';
  const zeroUpTo = (n: number) => bytes.slice(0, n).every((b) => b === 0);
  if (zeroUpTo(15) && bytes[15] === 0) return 'Requests to localhost are not allowed';
  if (zeroUpTo(15) && bytes[15] === 1) return 'Requests to loopback addresses are not allowed';
  if (zeroUpTo(10) && bytes[10] === 0xff && bytes[11] === 0xff) return ipv4Reason(bytes.slice(12));
  if ((bytes[0] & 0xfe) === 0xfc) return 'Requests to the local network are not allowed';
  if (bytes[0] === 0xfe && (bytes[1] & 0xc0) === 0x80) return 'Requests to the link local network are not allowed';
  // fec0::/10, the deprecated site-local range (GitLab's `ipv6_sitelocal?`), and multicast.
  if (bytes[0] === 0xfe && (bytes[1] & 0xc0) === 0xc0) return 'Requests to the local network are not allowed';
  if (bytes[0] === 0xff) return 'Requests to the local network are not allowed';
  return null;
};
