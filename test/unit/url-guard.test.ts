import { describe, expect, it } from 'vitest';
import { blockedReason } from '../../worker/events/url-guard';

describe('where a webhook may be sent', () => {
  it.each(['https://hooks.example.com/knock', 'http://203.0.113.7:8080/x', 'https://[2001:db8::1]/x', 'http://172.32.0.1/', 'http://100.128.0.1/', 'https://localhost.example.com/'])(
    'allows %s',
    (url) => expect(blockedReason(url, false)).toBeNull(),
  );

  it.each([
    ['ftp://hooks.example.com/', 'Only allowed schemes are http, https'],
    ['javascript:alert(1)', 'Only allowed schemes are http, https'],
    ['not a url', 'Only allowed schemes are http, https'],
    ['http://localhost/', 'Requests to localhost are not allowed'],
    ['http://api.localhost./', 'Requests to localhost are not allowed'],
    ['http://0.0.0.0/', 'Requests to localhost are not allowed'],
    ['http://[::]/', 'Requests to localhost are not allowed'],
    ['http://127.0.0.1/', 'Requests to loopback addresses are not allowed'],
    ['http://127.255.0.9/', 'Requests to loopback addresses are not allowed'],
    ['http://2130706433/', 'Requests to loopback addresses are not allowed'],
    ['http://0x7f000001/', 'Requests to loopback addresses are not allowed'],
    ['http://017700000001/', 'Requests to loopback addresses are not allowed'],
    ['http://[::1]/', 'Requests to loopback addresses are not allowed'],
    ['http://[::ffff:127.0.0.1]/', 'Requests to loopback addresses are not allowed'],
    ['http://10.0.0.1/', 'Requests to the local network are not allowed'],
    ['http://172.16.5.4/', 'Requests to the local network are not allowed'],
    ['http://172.31.255.255/', 'Requests to the local network are not allowed'],
    ['http://192.168.1.1/', 'Requests to the local network are not allowed'],
    ['http://100.64.0.1/', 'Requests to the local network are not allowed'],
    ['http://[fc00::1]/', 'Requests to the local network are not allowed'],
    ['http://[fec0::1]/', 'Requests to the local network are not allowed'],
    ['http://224.0.0.1/', 'Requests to the local network are not allowed'],
    ['http://169.254.169.254/latest/meta-data/', 'Requests to the link local network are not allowed'],
    ['http://[fe80::1]/', 'Requests to the link local network are not allowed'],
    ['http://255.255.255.255/', 'Requests to the limited broadcast address are not allowed'],
  ])('refuses %s: %s', (url, reason) => expect(blockedReason(url, false)).toBe(reason));

  it('allows local addresses when local development says so, but never another scheme', () => {
    expect(blockedReason('http://127.0.0.1:8787/hook', true)).toBeNull();
    expect(blockedReason('http://10.0.0.1/', true)).toBeNull();
    expect(blockedReason('file:///etc/passwd', true)).toBe('Only allowed schemes are http, https');
  });
});
