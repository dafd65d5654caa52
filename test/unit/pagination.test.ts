import { z } from '@hono/zod-openapi';
import { describe, expect, it } from 'vitest';
import { offsetOf, paginationHeadersFor, paginationQuery } from '../../worker/api/pagination';

// GitLab's pagination: https://docs.gitlab.com/api/rest/#pagination
const query = z.object(paginationQuery);
const parse = (q: Record<string, string>) => query.safeParse(q);

describe('page and per_page', () => {
  it('default to page 1 of 20', () => {
    expect(parse({}).data).toEqual({ page: 1, per_page: 20 });
  });

  it.each([
    ['500', 100],
    ['101', 100],
    ['100', 100],
    ['99', 99],
    ['1', 1],
  ])('per_page %s gives %i', (perPage, expected) => {
    expect(parse({ per_page: perPage }).data?.per_page).toBe(expected);
  });

  it.each(['0', '-1', '-500', 'abc', '', '2.5', '10abc'])('refuses per_page %j', (perPage) => {
    const result = parse({ per_page: perPage });
    expect(result.success).toBe(false);
    expect(result.error?.issues[0].path).toEqual(['per_page']);
  });

  it.each(['0', '-1', 'abc', '1.5'])('refuses page %j', (page) => {
    expect(parse({ page }).success).toBe(false);
  });

  it('skips the pages before the one asked for', () => {
    expect(offsetOf({ page: 1, perPage: 20 })).toBe(0);
    expect(offsetOf({ page: 3, perPage: 100 })).toBe(200);
  });
});

describe('the pagination headers', () => {
  const links = (headers: Record<string, string>) =>
    Object.fromEntries(
      headers.Link.split(', ').map((part) => {
        const m = /^<([^>]+)>; rel="(\w+)"$/.exec(part);
        if (!m) throw new Error(`not a link: ${part}`);
        return [m[2], m[1]];
      }),
    );

  it('describe a middle page of 45 items by 20', () => {
    const headers = paginationHeadersFor('https://knock.example/api/v4/projects/7/access_requests?page=2&per_page=20', { page: 2, perPage: 20 }, 45);
    expect(headers).toMatchObject({ 'X-Total': '45', 'X-Total-Pages': '3', 'X-Per-Page': '20', 'X-Page': '2', 'X-Next-Page': '3', 'X-Prev-Page': '1' });
    expect(links(headers)).toEqual({
      prev: 'https://knock.example/api/v4/projects/7/access_requests?page=1&per_page=20',
      next: 'https://knock.example/api/v4/projects/7/access_requests?page=3&per_page=20',
      first: 'https://knock.example/api/v4/projects/7/access_requests?page=1&per_page=20',
      last: 'https://knock.example/api/v4/projects/7/access_requests?page=3&per_page=20',
    });
  });

  it('link with the per_page actually served when more was asked for, keeping other parameters', () => {
    const headers = paginationHeadersFor('https://knock.example/api/v4/groups?search=acme&per_page=500', { page: 1, perPage: 100 }, 150);
    expect(headers['X-Per-Page']).toBe('100');
    expect(headers['X-Total-Pages']).toBe('2');
    expect(links(headers).next).toBe('https://knock.example/api/v4/groups?search=acme&per_page=100&page=2');
  });

  it('say one page, with no next or previous, when there is nothing', () => {
    const headers = paginationHeadersFor('https://knock.example/api/v4/users', { page: 1, perPage: 20 }, 0);
    expect(headers).toMatchObject({ 'X-Total': '0', 'X-Total-Pages': '1', 'X-Next-Page': '', 'X-Prev-Page': '' });
    expect(Object.keys(links(headers))).toEqual(['first', 'last']);
  });

  it('point back to the last page from beyond it', () => {
    const headers = paginationHeadersFor('https://knock.example/api/v4/users?page=9', { page: 9, perPage: 10 }, 25);
    expect(headers['X-Next-Page']).toBe('');
    expect(headers['X-Prev-Page']).toBe('3');
  });
});
