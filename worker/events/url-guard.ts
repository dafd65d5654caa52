import { resolveHost } from './doh';

/**
 * Where a webhook may be sent (GitLab's `Gitlab::UrlBlocker`, with its wording): http and https
 * only, and never to this machine, its networks or any other special-purpose address unless local
 * development allows it. Checked when a hook is saved and again before every delivery, so a hook
 * saved while local addresses were allowed, or whose name has since moved, is not sent there.
 *
 * An address in the URL is judged in whatever notation it is written, IPv4 inside IPv6 included.
 * A name is refused when it is not public by its suffix (`localhost`, `.internal`, `.local`, a
 * single label…); when `DNS_RESOLVER_URL` names a DNS-over-HTTPS resolver, the name is resolved
 * and every address it has is judged too, as the Worker cannot resolve names itself. Deployed on
 * Cloudflare a Worker's requests reach only the public internet; see docs/webhooks.md for what
 * stops the rest on a self-hosted runtime.
 */

/** Why a destination is refused: GitLab's messages, after "Url is blocked: ". */
const REASONS = {
  scheme: 'Only allowed schemes are http, https',
  localhost: 'Requests to localhost are not allowed',
  loopback: 'Requests to loopback addresses are not allowed',
  local: 'Requests to the local network are not allowed',
  linkLocal: 'Requests to the link local network are not allowed',
  shared: 'Requests to the shared address space are not allowed',
  broadcast: 'Requests to the limited broadcast address are not allowed',
  special: 'Requests to special-purpose addresses are not allowed',
  unresolvable: 'Host cannot be resolved or invalid',
} as const;
type Reason = keyof typeof REASONS;

/** What decides: wrangler.toml's `ALLOW_LOCAL_WEBHOOKS` and `DNS_RESOLVER_URL` (config.ts). */
export interface DestinationPolicy {
  allowLocalWebhooks: boolean;
  /** A DNS-over-HTTPS resolver (RFC 8484) to resolve names with; '' resolves nothing. */
  dnsResolverUrl: string;
}

/** Why `url` is refused (GitLab's message after "Url is blocked: "), or null when it may be used. */
export const checkDestination = async (url: string, policy: DestinationPolicy): Promise<string | null> => {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return REASONS.scheme;
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return REASONS.scheme;
  if (policy.allowLocalWebhooks) return null;
  // The URL parser has already written IPv4 in any notation (0x7f.1, 2130706433) as dotted
  // decimal, and IPv6 in brackets, compressed.
  const host = parsed.hostname.toLowerCase().replace(/\.$/, '');
  const literal = parseIpv4(host) ?? (host.startsWith('[') ? ipv6Bytes(host.slice(1, -1)) : null);
  if (literal) return reasonText(addressReason(literal));
  if (host.startsWith('[')) return REASONS.unresolvable;
  const byName = nameReason(host);
  if (byName || !policy.dnsResolverUrl) return reasonText(byName);
  const resolved = await resolveHost(policy.dnsResolverUrl, host);
  if ('error' in resolved) return REASONS.unresolvable;
  // As GitLab: one address that may not be reached refuses the name.
  return reasonText(resolved.addresses.map(addressReason).find((r) => r !== null) ?? null);
};

const reasonText = (reason: Reason | null): string | null => (reason ? REASONS[reason] : null);

/**
 * Names that are not public by their suffix: RFC 6761's special-use names, RFC 6762's `.local`
 * (and the private suffixes of its appendix G), RFC 8375's `home.arpa`, ICANN's `.internal`, and
 * a name of one label, which a resolver completes with its own search domains.
 */
const LOCAL_SUFFIXES = ['local', 'localdomain', 'internal', 'home.arpa', 'lan', 'intranet', 'corp', 'home', 'private'];
const UNRESOLVABLE_SUFFIXES = ['test', 'example', 'invalid', 'onion', 'alt', 'arpa'];
const endsWith = (host: string, suffixes: string[]) => suffixes.some((s) => host === s || host.endsWith(`.${s}`));

const nameReason = (host: string): Reason | null => {
  if (host === 'localhost' || host.endsWith('.localhost') || host === 'localhost.localdomain') return 'localhost';
  if (!host.includes('.') || endsWith(host, LOCAL_SUFFIXES)) return 'local';
  if (endsWith(host, UNRESOLVABLE_SUFFIXES)) return 'unresolvable';
  return null;
};

const parseIpv4 = (host: string): number[] | null => {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(host);
  return m ? m.slice(1).map(Number) : null;
};

/** The sixteen bytes of an IPv6 address as `URL` writes it (compressed, maybe with a dotted tail). */
const ipv6Bytes = (text: string): number[] | null => {
  const halves = text.split('::');
  if (halves.length > 2) return null;
  const words = (part: string | undefined): number[] =>
    (part ? part.split(':') : []).flatMap((p) => {
      const v4 = parseIpv4(p);
      return v4 ? [(v4[0] << 8) | v4[1], (v4[2] << 8) | v4[3]] : [/^[0-9a-f]{1,4}$/.test(p) ? parseInt(p, 16) : NaN];
    });
  const left = words(halves[0]);
  const right = words(halves[1]);
  const fill = halves.length === 2 ? Array(Math.max(0, 8 - left.length - right.length)).fill(0) : [];
  const all = [...left, ...fill, ...right];
  if (all.length !== 8 || all.some((w) => Number.isNaN(w))) return null;
  return all.flatMap((w) => [w >> 8, w & 0xff]);
};

/** A prefix, parsed once: its bytes and length in bits. */
type Range = { bytes: number[]; bits: number };
const range = (cidr: string): Range => {
  const [address, bits] = cidr.split('/');
  return { bytes: (parseIpv4(address) ?? ipv6Bytes(address)) as number[], bits: Number(bits) };
};
const inRange = (bytes: number[], r: Range): boolean => {
  for (let bit = 0; bit < r.bits; bit += 8) {
    const mask = (0xff << (8 - Math.min(8, r.bits - bit))) & 0xff;
    if ((bytes[bit / 8] & mask) !== (r.bytes[bit / 8] & mask)) return false;
  }
  return true;
};
const table = (entries: [string, Reason][]) => entries.map(([cidr, reason]) => ({ ...range(cidr), reason }));

/** RFC 6890's special-purpose IPv4 registry, with multicast and the reserved block. First match wins. */
const IPV4 = table([
  ['0.0.0.0/8', 'localhost'], // "this network" (RFC 791); GitLab counts it as localhost
  ['10.0.0.0/8', 'local'], // RFC 1918
  ['100.64.0.0/10', 'shared'], // RFC 6598, carrier-grade NAT
  ['127.0.0.0/8', 'loopback'], // RFC 1122
  ['169.254.0.0/16', 'linkLocal'], // RFC 3927, and the cloud metadata address
  ['172.16.0.0/12', 'local'], // RFC 1918
  ['192.0.0.0/24', 'special'], // IETF protocol assignments (RFC 6890)
  ['192.0.2.0/24', 'special'], // TEST-NET-1 (RFC 5737)
  ['192.88.99.0/24', 'special'], // 6to4 relay anycast (RFC 7526)
  ['192.168.0.0/16', 'local'], // RFC 1918
  ['198.18.0.0/15', 'special'], // benchmarking (RFC 2544)
  ['198.51.100.0/24', 'special'], // TEST-NET-2 (RFC 5737)
  ['203.0.113.0/24', 'special'], // TEST-NET-3 (RFC 5737)
  ['224.0.0.0/4', 'local'], // multicast (RFC 5771)
  ['255.255.255.255/32', 'broadcast'], // limited broadcast (RFC 919)
  ['240.0.0.0/4', 'special'], // reserved (RFC 1112)
]);

/** RFC 6890's special-purpose IPv6 registry, and the scopes of RFC 4291. First match wins. */
const IPV6 = table([
  ['::/128', 'localhost'], // unspecified
  ['::1/128', 'loopback'],
  ['100::/64', 'special'], // discard-only (RFC 6666)
  ['64:ff9b:1::/48', 'special'], // local-use IPv4/IPv6 translation (RFC 8215)
  ['2001:db8::/32', 'special'], // documentation (RFC 3849)
  ['2001::/23', 'special'], // IETF protocol assignments (RFC 2928), Teredo (RFC 4380) among them
  ['3fff::/20', 'special'], // documentation (RFC 9637)
  ['5f00::/16', 'special'], // SRv6 SIDs (RFC 9602)
  ['fc00::/7', 'local'], // unique local (RFC 4193)
  ['fe80::/10', 'linkLocal'], // link-local (RFC 4291)
  ['fec0::/10', 'local'], // site-local (RFC 3879), GitLab's `ipv6_sitelocal?`
  ['ff00::/8', 'local'], // multicast (RFC 4291)
]);

/** Where an IPv6 address carries the IPv4 address a connection really reaches: judged as that one. */
const EMBEDDED_IPV4 = [
  { ...range('::ffff:0:0/96'), at: 12 }, // IPv4-mapped (RFC 4291 §2.5.5.2)
  { ...range('::ffff:0:0:0/96'), at: 12 }, // IPv4-translated (RFC 2765 §2.1)
  { ...range('::/96'), at: 12 }, // IPv4-compatible, deprecated (RFC 4291 §2.5.5.1)
  { ...range('64:ff9b::/96'), at: 12 }, // the well-known NAT64 prefix (RFC 6052 §2.1)
  { ...range('2002::/16'), at: 2 }, // 6to4 (RFC 3056 §2)
];
const GLOBAL_UNICAST = range('2000::/3');

/** Why an address (4 or 16 bytes) may not be reached, or null for a public one. */
const addressReason = (bytes: ArrayLike<number>): Reason | null => {
  const b = Array.from(bytes);
  if (b.length === 4) return IPV4.find((r) => inRange(b, r))?.reason ?? null;
  const listed = IPV6.find((r) => inRange(b, r));
  if (listed && listed.bits === 128) return listed.reason;
  const embedded = EMBEDDED_IPV4.find((r) => inRange(b, r));
  if (embedded) return addressReason(b.slice(embedded.at, embedded.at + 4));
  if (listed) return listed.reason;
  // Only 2000::/3 is allocated for global unicast (RFC 4291 §2.4); the rest is not the internet.
  return inRange(b, GLOBAL_UNICAST) ? null : 'special';
};
