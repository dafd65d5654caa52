import { describe, expect, it, vi } from 'vitest';
import { timeAgo } from '../../shared/relative-time';
import { hostPattern, normalizeServerUrl } from '../../extension/lib/server-url';
import { levelsAllowedToApprove } from '../../shared/access-levels';
import { ApiError, parseRetryAfter } from '../../shared/api-error';
import { createKnockClient } from '../../shared/client';

const names = (kind: 'group' | 'project', approver: number) => levelsAllowedToApprove(kind, approver).map((l) => l.name);

describe('levels an approver may grant', () => {
  it('on a group, for its Owner: everything from Minimal access to Owner', () => {
    expect(names('group', 50)).toEqual(['Minimal access', 'Guest', 'Planner', 'Reporter', 'Developer', 'Maintainer', 'Owner']);
  });

  it('on a project, for a Maintainer: Guest to Maintainer', () => {
    expect(names('project', 40)).toEqual(['Guest', 'Planner', 'Reporter', 'Developer', 'Maintainer']);
  });

  it('on a project, for an Owner: Guest to Owner', () => {
    expect(names('project', 50)).toEqual(['Guest', 'Planner', 'Reporter', 'Developer', 'Maintainer', 'Owner']);
  });

  it('nothing for someone who may not approve there', () => {
    expect(names('group', 40)).toEqual([]);
    expect(names('project', 30)).toEqual([]);
  });
});

describe('the API client', () => {
  it('follows X-Next-Page until the last page', async () => {
    const pages: Record<string, { body: unknown[]; next: string }> = {
      '1': { body: [{ id: 1 }, { id: 2 }], next: '2' },
      '2': { body: [{ id: 3 }], next: '' },
    };
    const fetch = vi.fn(async (url: string) => {
      const page = pages[new URL(url).searchParams.get('page')!]!;
      return new Response(JSON.stringify(page.body), { headers: { 'X-Next-Page': page.next } });
    });
    const client = createKnockClient({ serverUrl: 'https://knock.test/', fetch });

    const groups = await client.groups(50);

    expect(groups.map((g) => g.id)).toEqual([1, 2, 3]);
    expect(new URL(fetch.mock.calls[0]![0]).search).toBe('?min_access_level=50&per_page=100&page=1');
  });

  it('addresses a group or project by its URL-encoded path', async () => {
    const fetch = vi.fn(async () => new Response('{}', { status: 201 }));
    await createKnockClient({ serverUrl: 'https://knock.test', fetch }).requestAccess('project', 'acme/website');

    expect(fetch).toHaveBeenCalledWith('https://knock.test/api/v4/projects/acme%2Fwebsite/access_requests', expect.objectContaining({ method: 'POST' }));
  });

  it('turns error bodies into readable errors, with Retry-After on a 429', async () => {
    const answers = [
      new Response(JSON.stringify({ message: '403 Forbidden' }), { status: 403 }),
      new Response(JSON.stringify({ message: { user_id: ['already exists in source'] } }), { status: 400 }),
      new Response(JSON.stringify({ message: '429 Too Many Requests' }), { status: 429, headers: { 'Retry-After': '30' } }),
    ];
    const client = createKnockClient({ serverUrl: 'https://knock.test', fetch: async () => answers.shift()! });

    await expect(client.deny('group', 1, 2)).rejects.toMatchObject({ status: 403, message: '403 Forbidden' });
    await expect(client.requestAccess('group', 'acme')).rejects.toMatchObject({ message: 'user_id already exists in source' });
    const throttled = await client.currentUser().catch((error: ApiError) => error);
    expect(throttled).toMatchObject({ status: 429, retryAfterSeconds: 30 });
  });

  it('reads Retry-After as seconds or as an HTTP date', () => {
    const now = Date.parse('2026-11-21T12:00:00Z');
    expect(parseRetryAfter('120', now)).toBe(120);
    expect(parseRetryAfter('Sat, 21 Nov 2026 12:01:00 GMT', now)).toBe(60);
    expect(parseRetryAfter(null, now)).toBeUndefined();
  });
});

describe('server addresses', () => {
  it('allow plain http only for this machine (127.0.0.1, localhost, [::1])', () => {
    expect(normalizeServerUrl('http://[::1]:8787/x')).toBe('http://[::1]:8787');
    expect(normalizeServerUrl('http://127.0.0.1:8787')).toBe('http://127.0.0.1:8787');
    expect(normalizeServerUrl('https://knock.example/x')).toBe('https://knock.example');
    expect(() => normalizeServerUrl('http://knock.example')).toThrow('http:// only for 127.0.0.1, localhost or [::1]');
  });

  it('are asked for as host permissions without their port, which match every port in both browsers', () => {
    expect(hostPattern('http://127.0.0.1:8787')).toBe('http://127.0.0.1/*');
    expect(hostPattern('http://[::1]:8787')).toBe('http://[::1]/*');
    expect(hostPattern('https://knock.example:8443')).toBe('https://knock.example/*');
  });
});

describe('timeAgo (the popup and the console)', () => {
  const now = Date.parse('2026-11-26T12:00:00Z');
  it('says how long ago, how long until an expiry, and "just now" within a minute', () => {
    expect(timeAgo('2026-11-26T10:00:00Z', now)).toBe('2 hours ago');
    expect(timeAgo('2026-11-26T11:59:30Z', now)).toBe('just now');
    expect(timeAgo('2026-11-26T12:00:30Z', now)).toBe('just now');
    expect(timeAgo('2026-11-29T12:00:00Z', now)).toBe('in 3 days');
  });
});
