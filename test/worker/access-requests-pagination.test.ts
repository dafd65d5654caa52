import { env } from 'cloudflare:workers';
import { runInDurableObject } from 'cloudflare:test';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Namespace } from '../../worker/durable/namespace/namespace';
import type { NamespaceRef } from '../../worker/durable/namespace/types';
import { as, createSource, KIND_ROUTES, person, startWorker } from './support/namespaces';

const linkOf = (res: Response) =>
  Object.fromEntries(
    (res.headers.get('Link') ?? '')
      .split(', ')
      .filter(Boolean)
      .map((part) => {
        const m = /^<([^>]+)>; rel="(\w+)"$/.exec(part)!;
        return [m[2], m[1]];
      }),
  );

beforeAll(startWorker, 30_000);

describe.each(KIND_ROUTES)('paginating access requests of %s', (kind) => {
  it('pages 25 requests oldest first, with GitLab headers and Link URLs', async () => {
    const owner = await person('own');
    const source = await createSource(kind, owner);
    const requesters = [];
    for (let i = 0; i < 25; i++) {
      const user = await person('req');
      expect((await as(user).post(`/${kind}/${source.id}/access_requests`)).status).toBe(201);
      requesters.push(user.id);
    }
    const base = `http://knock.test/api/v4/${kind}/${source.id}/access_requests`;

    const first = await as(owner).get(`/${kind}/${source.id}/access_requests?per_page=10`);
    expect(first.status).toBe(200);
    expect(Object.fromEntries(['X-Total', 'X-Total-Pages', 'X-Per-Page', 'X-Page', 'X-Next-Page', 'X-Prev-Page'].map((h) => [h, first.headers.get(h)]))).toEqual({
      'X-Total': '25',
      'X-Total-Pages': '3',
      'X-Per-Page': '10',
      'X-Page': '1',
      'X-Next-Page': '2',
      'X-Prev-Page': '',
    });
    expect(linkOf(first)).toEqual({
      next: `${base}?per_page=10&page=2`,
      first: `${base}?per_page=10&page=1`,
      last: `${base}?per_page=10&page=3`,
    });

    const pages = [first, await as(owner).get(`/${kind}/${source.id}/access_requests?per_page=10&page=2`), await as(owner).get(`/${kind}/${source.id}/access_requests?page=3&per_page=10`)];
    const ids = (await Promise.all(pages.map((p) => p.json() as Promise<{ id: number }[]>))).flat().map((r) => r.id);
    expect(ids).toEqual(requesters);

    const last = pages[2];
    expect(last.headers.get('X-Next-Page')).toBe('');
    expect(last.headers.get('X-Prev-Page')).toBe('2');
    expect(linkOf(last)).toEqual({
      prev: `${base}?page=2&per_page=10`,
      first: `${base}?page=1&per_page=10`,
      last: `${base}?page=3&per_page=10`,
    });

    const byDefault = await as(owner).get(`/${kind}/${source.id}/access_requests`);
    expect(byDefault.headers.get('X-Per-Page')).toBe('20');
    expect(((await byDefault.json()) as unknown[]).length).toBe(20);

    const beyond = await as(owner).get(`/${kind}/${source.id}/access_requests?page=9&per_page=10`);
    expect(await beyond.json()).toEqual([]);
    expect(beyond.headers.get('X-Total-Pages')).toBe('3');
  });

  it.each(['per_page=0', 'per_page=-1', 'per_page=abc', 'per_page=2.5', 'page=0'])('refuses %s with 400', async (query) => {
    const owner = await person('own');
    const source = await createSource(kind, owner);
    const res = await as(owner).get(`/${kind}/${source.id}/access_requests?${query}`);
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ error: expect.stringMatching(/^(per_page|page) /) });
  });

  it('says one page of nothing when there are no requests', async () => {
    const owner = await person('own');
    const source = await createSource(kind, owner);
    const res = await as(owner).get(`/${kind}/${source.id}/access_requests`);
    expect(await res.json()).toEqual([]);
    expect(res.headers.get('X-Total')).toBe('0');
    expect(res.headers.get('X-Total-Pages')).toBe('1');
  });
});

describe('per_page above 100', () => {
  // GitLab caps per_page at 100 (https://docs.gitlab.com/api/rest/#pagination); clients that ask
  // for more expect 100 and follow the Link header for the rest.
  it('is served as 100, with headers and Link URLs saying so', async () => {
    const owner = await person('own');
    const source = await createSource('projects', owner);
    await runInDurableObject(env.NAMESPACES.getByName(String(source.id)), (_instance: Namespace, state) => {
      state.storage.sql.exec(
        `WITH RECURSIVE s (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < 150)
         INSERT INTO access_requests (user_id, requested_at, username, name) SELECT 20000000 + n, ?, 'seeded_' || n, 'Seeded ' || n FROM s`,
        new Date().toISOString(),
      );
    });
    const base = `http://knock.test/api/v4/projects/${source.id}/access_requests`;

    const res = await as(owner).get(`/projects/${source.id}/access_requests?per_page=500`);
    expect(res.status).toBe(200);
    expect(((await res.json()) as unknown[]).length).toBe(100);
    expect(Object.fromEntries(['X-Total', 'X-Total-Pages', 'X-Per-Page', 'X-Next-Page'].map((h) => [h, res.headers.get(h)]))).toEqual({
      'X-Total': '150',
      'X-Total-Pages': '2',
      'X-Per-Page': '100',
      'X-Next-Page': '2',
    });
    expect(linkOf(res)).toEqual({
      next: `${base}?per_page=100&page=2`,
      first: `${base}?per_page=100&page=1`,
      last: `${base}?per_page=100&page=2`,
    });

    const rest = await as(owner).get(`/projects/${source.id}/access_requests?per_page=500&page=2`);
    expect(((await rest.json()) as unknown[]).length).toBe(50);
  });
});

describe('the cost of a page', () => {
  /** A namespace with `count` pending requests seeded straight into its Durable Object. */
  const seeded = async (count: number) => {
    const owner = await person('own');
    const source = await createSource('projects', owner);
    const stub = env.NAMESPACES.getByName(String(source.id));
    const ref: NamespaceRef = { id: source.id, kind: 'project', creatorId: owner.id, createdAt: new Date().toISOString(), snapshot: { visibility: 'private', request_access_enabled: true, full_path: '', name: '', version: 0 }, byPath: false };
    await runInDurableObject(stub, (_instance: Namespace, state) => {
      state.storage.sql.exec(
        `WITH RECURSIVE s (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < ?)
         INSERT INTO access_requests (user_id, requested_at, username, name) SELECT 10000000 + n, ?, 'seeded' || n, 'Seeded ' || n FROM s`,
        count,
        new Date().toISOString(),
      );
      // The insert trigger queued each row for the tree's index partition; these requesters are
      // no users, and what this measures is the object's read alone: without this, the next push
      // sends the partition thousands of requests to fan out (about 30 s of the runtime's CPU in
      // the background, after this file has finished).
      state.storage.sql.exec('DELETE FROM outbox WHERE user_id > 10000000');
    });
    return { stub, ref, owner };
  };

  /** Rows SQLite read while the Durable Object answered one page. */
  const rowsReadForPage = async (count: number, offset: number) => {
    const { stub, ref, owner } = await seeded(count);
    return runInDurableObject(stub, async (instance: Namespace, state) => {
      const sql = state.storage.sql;
      const cursors: SqlStorageCursor<Record<string, SqlStorageValue>>[] = [];
      const exec = sql.exec.bind(sql);
      sql.exec = ((query: string, ...bindings: unknown[]) => {
        const cursor = exec(query, ...bindings);
        cursors.push(cursor);
        return cursor;
      }) as typeof sql.exec;
      try {
        const result = await instance.listAccessRequests(ref, { userId: owner.id, admin: false, inherited: 0 }, offset, 20);
        expect(result.ok && result.value.total).toBe(count);
        expect(result.ok && result.value.items.length).toBe(Math.min(20, count - offset));
      } finally {
        sql.exec = exec;
      }
      return cursors.reduce((sum, c) => sum + c.rowsRead, 0);
    });
  };

  it('is the same with 10 or 5,000 pending requests', async () => {
    const small = await rowsReadForPage(10, 0);
    const large = await rowsReadForPage(5000, 0);
    expect(small).toBeGreaterThan(0);
    // The large page shows 10 rows more than the small one (20, not 10); a row costs a read of
    // itself and one of its approvals (none here): nothing else grows with the 5,000.
    expect(large).toBeLessThanOrEqual(small + 2 * 10);
    expect(large).toBeLessThan(50);
  });

  it('grows with the page, not with the number of requests', async () => {
    const page100 = await rowsReadForPage(5000, 2000);
    expect(page100).toBeGreaterThanOrEqual(2000);
    expect(page100).toBeLessThan(2100);
  });
});
