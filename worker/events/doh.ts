import { base64url } from '../auth/crypto';
import { readCapped } from './capped-body';

/**
 * Resolving a host name through DNS over HTTPS (RFC 8484), since a Worker has no resolver of its
 * own: a GET with the query in `dns=` and ID 0 (§4.1), answered with `application/dns-message`,
 * the wire format of RFC 1035 §4.1. Used by the URL guard when `DNS_RESOLVER_URL` names a resolver.
 */

/** How resolver queries leave the Worker. Tests replace `dohTransport.fetch` to be the resolver. */
export const dohTransport = {
  fetch: (request: Request): Promise<Response> => fetch(request),
};

/** The addresses a name has (4 bytes for IPv4, 16 for IPv6), or why there are none to judge. */
type Resolution = { addresses: Uint8Array[] } | { error: 'no such name' | 'resolver failed' };

const A = 1;
const AAAA = 28;
const CLASS_IN = 1;
const TIMEOUT_MS = 5000;
/** The largest DNS message (RFC 1035 §4.2.2's two-byte length): nothing longer is read. */
const MAX_MESSAGE_BYTES = 65535;

/** The A and AAAA records of `name`, asked of the resolver at `resolverUrl`. */
export const resolveHost = async (resolverUrl: string, name: string): Promise<Resolution> => {
  const answers = await Promise.all([ask(resolverUrl, name, A), ask(resolverUrl, name, AAAA)]);
  if (answers.some((a) => a === null)) return { error: 'resolver failed' };
  if (answers.every((a) => a === 'no such name')) return { error: 'no such name' };
  const addresses = answers.flatMap((a) => (Array.isArray(a) ? a : []));
  return addresses.length > 0 ? { addresses } : { error: 'no such name' };
};

/** One question (RFC 1035 §4.1.1–4.1.2): recursion desired, one entry, class IN. */
const encodeQuery = (name: string, type: number): Uint8Array | null => {
  const labels = name.split('.').map((label) => new TextEncoder().encode(label));
  if (labels.some((l) => l.length === 0 || l.length > 63) || name.length > 253) return null;
  const bytes = [0, 0, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0];
  for (const label of labels) bytes.push(label.length, ...label);
  bytes.push(0, 0, type, 0, CLASS_IN);
  return Uint8Array.from(bytes);
};

/** The records of `type` in the answer, 'no such name' (NXDOMAIN), or null when the resolver could not be used. */
const ask = async (resolverUrl: string, name: string, type: number): Promise<Uint8Array[] | 'no such name' | null> => {
  const query = encodeQuery(name, type);
  if (!query) return 'no such name';
  const url = new URL(resolverUrl);
  url.searchParams.set('dns', base64url(query));
  try {
    const response = await dohTransport.fetch(
      new Request(url, { headers: { Accept: 'application/dns-message' }, redirect: 'manual', signal: AbortSignal.timeout(TIMEOUT_MS) }),
    );
    if (response.status !== 200) {
      await response.body?.cancel();
      return null;
    }
    return parseAnswer(await readCapped(response, MAX_MESSAGE_BYTES), type);
  } catch {
    return null;
  }
};

/** RFC 1035 §4.1: the header, the questions (skipped), then each answer's type, class and data. */
const parseAnswer = (message: Uint8Array, type: number): Uint8Array[] | 'no such name' | null => {
  if (message.length < 12) return null;
  const view = new DataView(message.buffer, message.byteOffset, message.byteLength);
  const flags = view.getUint16(2);
  if (!(flags & 0x8000)) return null;
  const rcode = flags & 0x000f;
  if (rcode === 3) return 'no such name';
  if (rcode !== 0) return null;
  let at = 12;
  /** Steps over a name: labels, ending at a zero length or at a compression pointer (§4.1.4). */
  const skipName = (): boolean => {
    while (at < message.length) {
      const length = message[at];
      if ((length & 0xc0) === 0xc0) return (at += 2) <= message.length;
      at += 1 + length;
      if (length === 0) return true;
    }
    return false;
  };
  for (let i = view.getUint16(4); i > 0; i--) {
    if (!skipName()) return null;
    at += 4;
  }
  const found: Uint8Array[] = [];
  for (let i = view.getUint16(6); i > 0; i--) {
    if (!skipName() || at + 10 > message.length) return null;
    const [rtype, rclass, length] = [view.getUint16(at), view.getUint16(at + 2), view.getUint16(at + 8)];
    at += 10;
    if (at + length > message.length) return null;
    if (rtype === type && rclass === CLASS_IN && length === (type === A ? 4 : 16)) found.push(message.slice(at, at + length));
    at += length;
  }
  return found;
};
