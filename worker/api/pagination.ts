import { z } from '@hono/zod-openapi';
import type { Context } from 'hono';

/** `page` and `per_page` (contract §3): defaults 1 and 20, per_page at most 100, 0 refused. */
export const paginationQuery = {
  page: z.coerce.number().int().min(1).max(1_000_000).default(1).openapi({ example: 1 }),
  per_page: z.coerce.number().int().min(1).max(100).default(20).openapi({ example: 20 }),
};

export interface Page {
  page: number;
  perPage: number;
}

export const offsetOf = ({ page, perPage }: Page) => (page - 1) * perPage;

/** GitLab's pagination headers, with `Link` URLs built from the request URL. */
export const paginationHeaders = (c: Context, { page, perPage }: Page, total: number): Record<string, string> => {
  const totalPages = Math.max(1, Math.ceil(total / perPage));
  const next = page < totalPages ? page + 1 : null;
  const prev = page > 1 ? Math.min(page - 1, totalPages) : null;
  const link = (p: number, rel: string) => {
    const url = new URL(c.req.url);
    url.searchParams.set('page', String(p));
    url.searchParams.set('per_page', String(perPage));
    return `<${url.toString()}>; rel="${rel}"`;
  };
  const links = [
    prev !== null ? link(prev, 'prev') : null,
    next !== null ? link(next, 'next') : null,
    link(1, 'first'),
    link(totalPages, 'last'),
  ].filter(Boolean);
  return {
    'X-Total': String(total),
    'X-Total-Pages': String(totalPages),
    'X-Per-Page': String(perPage),
    'X-Page': String(page),
    'X-Next-Page': next === null ? '' : String(next),
    'X-Prev-Page': prev === null ? '' : String(prev),
    Link: links.join(', '),
  };
};

/** The validated `page` and `per_page` of a list route. */
export const pageOf = (q: { page: number; per_page: number }): Page => ({ page: q.page, perPage: q.per_page });

/** The rows a page covers. */
export const windowOf = (page: Page) => ({ offset: offsetOf(page), limit: page.perPage });
