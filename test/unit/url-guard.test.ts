import { afterEach, describe, expect, it } from 'vitest';
import { dohTransport } from '../../worker/events/doh';
import { checkDestination } from '../../worker/events/url-guard';

const deployed = { allowLocalWebhooks: false, dnsResolverUrl: '' };
const check = (url: string) => checkDestination(url, deployed);

describe('where a webhook may be sent', () => {
  it.each([
    'https://hooks.example.com/knock',
    'http://8.8.8.8:8080/x',
    'https://[2606:4700:4700::1111]/x',
    'http://172.32.0.1/',
    'http://100.128.0.1/',
    'http://198.20.0.1/',
    'https://localhost.example.com/',
    'http://[2002:808:808::1]/', // 6to4 of 8.8.8.8
    'http://[64:ff9b::808:808]/', // NAT64 of 8.8.8.8
    'http://[::ffff:8.8.8.8]/', // IPv4-mapped 8.8.8.8
  ])('allows %s', async (url) => expect(await check(url)).toBeNull());

  it.each([
    ['ftp://hooks.example.com/', 'Only allowed schemes are http, https'],
    ['javascript:alert(1)', 'Only allowed schemes are http, https'],
    ['not a url', 'Only allowed schemes are http, https'],
    ['http://localhost/', 'Requests to localhost are not allowed'],
    ['http://api.localhost./', 'Requests to localhost are not allowed'],
    ['http://localhost.localdomain/', 'Requests to localhost are not allowed'],
    ['http://0.0.0.0/', 'Requests to localhost are not allowed'],
    ['http://[::]/', 'Requests to localhost are not allowed'],
    ['http://127.0.0.1/', 'Requests to loopback addresses are not allowed'],
    ['http://127.255.0.9/', 'Requests to loopback addresses are not allowed'],
    ['http://2130706433/', 'Requests to loopback addresses are not allowed'],
    ['http://0x7f000001/', 'Requests to loopback addresses are not allowed'],
    ['http://017700000001/', 'Requests to loopback addresses are not allowed'],
    ['http://[::1]/', 'Requests to loopback addresses are not allowed'],
    ['http://[::ffff:127.0.0.1]/', 'Requests to loopback addresses are not allowed'],
    // IPv4 inside IPv6: compatible (RFC 4291), translated (RFC 2765), NAT64 (RFC 6052), 6to4 (RFC 3056).
    ['http://[::127.0.0.1]/', 'Requests to loopback addresses are not allowed'],
    ['http://[::ffff:0:7f00:1]/', 'Requests to loopback addresses are not allowed'],
    ['http://[64:ff9b::a9fe:a9fe]/', 'Requests to the link local network are not allowed'],
    ['http://[2002:7f00:1::]/', 'Requests to loopback addresses are not allowed'],
    ['http://[2002:a00:1::]/', 'Requests to the local network are not allowed'],
    ['http://10.0.0.1/', 'Requests to the local network are not allowed'],
    ['http://172.16.5.4/', 'Requests to the local network are not allowed'],
    ['http://172.31.255.255/', 'Requests to the local network are not allowed'],
    ['http://192.168.1.1/', 'Requests to the local network are not allowed'],
    ['http://100.64.0.1/', 'Requests to the shared address space are not allowed'],
    ['http://[fc00::1]/', 'Requests to the local network are not allowed'],
    ['http://[fec0::1]/', 'Requests to the local network are not allowed'],
    ['http://224.0.0.1/', 'Requests to the local network are not allowed'],
    ['http://169.254.169.254/latest/meta-data/', 'Requests to the link local network are not allowed'],
    ['http://[fe80::1]/', 'Requests to the link local network are not allowed'],
    ['http://255.255.255.255/', 'Requests to the limited broadcast address are not allowed'],
    // The rest of RFC 6890's special-purpose ranges.
    ['http://192.0.0.170/', 'Requests to special-purpose addresses are not allowed'],
    ['http://192.0.2.1/', 'Requests to special-purpose addresses are not allowed'],
    ['http://192.88.99.1/', 'Requests to special-purpose addresses are not allowed'],
    ['http://198.18.0.1/', 'Requests to special-purpose addresses are not allowed'],
    ['http://198.19.255.254/', 'Requests to special-purpose addresses are not allowed'],
    ['http://198.51.100.7/', 'Requests to special-purpose addresses are not allowed'],
    ['http://203.0.113.7/', 'Requests to special-purpose addresses are not allowed'],
    ['http://240.0.0.1/', 'Requests to special-purpose addresses are not allowed'],
    ['http://[2001::7f00:1]/', 'Requests to special-purpose addresses are not allowed'], // Teredo
    ['http://[2001:db8::1]/', 'Requests to special-purpose addresses are not allowed'],
    ['http://[100::1]/', 'Requests to special-purpose addresses are not allowed'],
    ['http://[64:ff9b:1::a00:1]/', 'Requests to special-purpose addresses are not allowed'],
    ['http://[1::1]/', 'Requests to special-purpose addresses are not allowed'], // outside 2000::/3
    // Names that are not public by their suffix.
    ['http://metadata.google.internal/computeMetadata/v1/', 'Requests to the local network are not allowed'],
    ['http://metadata/', 'Requests to the local network are not allowed'],
    ['http://printer.local/', 'Requests to the local network are not allowed'],
    ['http://nas.home.arpa/', 'Requests to the local network are not allowed'],
    ['http://router.lan/', 'Requests to the local network are not allowed'],
    ['http://receiver.test/', 'Host cannot be resolved or invalid'],
    ['http://1.0.0.127.in-addr.arpa/', 'Host cannot be resolved or invalid'],
  ])('refuses %s: %s', async (url, reason) => expect(await check(url)).toBe(reason));

  it('allows local addresses and names when local development says so, but never another scheme', async () => {
    const local = { ...deployed, allowLocalWebhooks: true };
    expect(await checkDestination('http://127.0.0.1:8787/hook', local)).toBeNull();
    expect(await checkDestination('http://receiver.internal/', local)).toBeNull();
    expect(await checkDestination('file:///etc/passwd', local)).toBe('Only allowed schemes are http, https');
  });
});

/** The resolver: answers RFC 8484 GET queries from `zone` (name → addresses), NXDOMAIN otherwise. */
const resolver = (zone: Record<string, string[]>) => {
  const asked: string[] = [];
  dohTransport.fetch = async (request) => {
    expect(request.headers.get('accept')).toBe('application/dns-message');
    const query = Uint8Array.from(atob(new URL(request.url).searchParams.get('dns')!.replace(/-/g, '+').replace(/_/g, '/')), (c) => c.charCodeAt(0));
    const labels: string[] = [];
    let at = 12;
    while (query[at]) {
      labels.push(new TextDecoder().decode(query.subarray(at + 1, at + 1 + query[at])));
      at += 1 + query[at];
    }
    const type = query[at + 2];
    const name = labels.join('.');
    asked.push(`${name} ${type === 1 ? 'A' : 'AAAA'}`);
    const records = name in zone ? zone[name].map(bytesOf).filter((b) => b.length === (type === 1 ? 4 : 16)) : null;
    const answers = (records ?? []).flatMap((rdata) => [0xc0, 12, 0, type, 0, 1, 0, 0, 0, 60, 0, rdata.length, ...rdata]);
    const header = [0, 0, 0x81, records ? 0x80 : 0x83, 0, 1, 0, records?.length ?? 0, 0, 0, 0, 0];
    return new Response(Uint8Array.from([...header, ...query.subarray(12, at + 5), ...answers]), { headers: { 'Content-Type': 'application/dns-message' } });
  };
  return asked;
};
/** An IPv4 address, or an IPv6 one written out in eight groups, as bytes. */
const bytesOf = (address: string): number[] =>
  address.includes(':') ? address.split(':').flatMap((w) => [parseInt(w, 16) >> 8, parseInt(w, 16) & 0xff]) : address.split('.').map(Number);

const realFetch = dohTransport.fetch;
afterEach(() => {
  dohTransport.fetch = realFetch;
});

describe('resolving names through DNS over HTTPS (DNS_RESOLVER_URL)', () => {
  const resolving = { ...deployed, dnsResolverUrl: 'https://dns.example.net/dns-query' };

  it('allows a name whose every address is public, asking for A and AAAA', async () => {
    const asked = resolver({ 'hooks.example.com': ['93.184.215.14', '2606:2800:21f:cb07:6820:80da:af6b:8b2c'] });
    expect(await checkDestination('https://hooks.example.com/knock', resolving)).toBeNull();
    expect(asked.sort()).toEqual(['hooks.example.com A', 'hooks.example.com AAAA']);
  });

  it('refuses a name with any address inside, however public its other addresses', async () => {
    resolver({ 'rebind.example.com': ['93.184.215.14', '127.0.0.1'], 'v6.example.com': ['fd00:0:0:0:0:0:0:1'], 'meta.example.com': ['169.254.169.254'] });
    expect(await checkDestination('http://rebind.example.com/', resolving)).toBe('Requests to loopback addresses are not allowed');
    expect(await checkDestination('http://v6.example.com/', resolving)).toBe('Requests to the local network are not allowed');
    expect(await checkDestination('http://meta.example.com/', resolving)).toBe('Requests to the link local network are not allowed');
  });

  it('refuses a name public DNS does not know (an /etc/hosts entry), and fails closed when the resolver fails', async () => {
    resolver({});
    expect(await checkDestination('http://build-box.example.com/', resolving)).toBe('Host cannot be resolved or invalid');
    dohTransport.fetch = async () => new Response('busy', { status: 503 });
    expect(await checkDestination('https://hooks.example.com/', resolving)).toBe('Host cannot be resolved or invalid');
    dohTransport.fetch = async () => new Response(new Uint8Array([1, 2, 3]));
    expect(await checkDestination('https://hooks.example.com/', resolving)).toBe('Host cannot be resolved or invalid');
  });

  it('asks nothing for an address, or a name refused by its suffix', async () => {
    const asked = resolver({});
    expect(await checkDestination('http://8.8.8.8/', resolving)).toBeNull();
    expect(await checkDestination('http://metadata.google.internal/', resolving)).toBe('Requests to the local network are not allowed');
    expect(asked).toEqual([]);
  });
});
