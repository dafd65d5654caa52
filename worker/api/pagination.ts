import { z } from '@hono/zod-openapi';
import type { Context } from 'hono';

/** GitLab's most items per page; a larger `per_page` is served as this many. */
const MAX_PER_PAGE = 100;
const DEFAULT_PER_PAGE = 20;

/**
 * `page` and `per_page` as GitLab reads them (https://docs.gitlab.com/api/rest/#pagination):
 * defaults 1 and 20, and `per_page` above 100 is capped at 100 rather than refused, which clients
 * written for GitLab rely on. Zero, negative, fractional and non-numeric values are a 400.
 */
export const paginationQuery = {
  page: z.coerce.number().int().min(1).max(1_000_000).default(1).openapi({ example: 1 }),
  per_page: z.coerce
    .number()
    .int()
    .min(1)
    .overwrite((n) => Math.min(n, MAX_PER_PAGE))
    .default(DEFAULT_PER_PAGE)
    .openapi({
      example: DEFAULT_PER_PAGE,
      description: `Items per page (default ${DEFAULT_PER_PAGE}). As in GitLab, a value above ${MAX_PER_PAGE} is served as ${MAX_PER_PAGE} (see the X-Per-Page header); 0, negative or non-numeric values are a 400.`,
    }),
};

export interface Page {
  page: number;
  perPage: number;
}

export const offsetOf = ({ page, perPage }: Page) => (page - 1) * perPage;

/** GitLab's pagination headers, with `Link` URLs (RFC 8288) built from the request URL. */
export const paginationHeaders = (c: Context, page: Page, total: number): Record<string, string> =>
  paginationHeadersFor(c.req.url, page, total);

/** `paginationHeaders` for a request URL. */
export const paginationHeadersFor = (requestUrl: string, { page, perPage }: Page, total: number): Record<string, string> => {
  const totalPages = Math.max(1, Math.ceil(total / perPage));
  const next = page < totalPages ? page + 1 : null;
  const prev = page > 1 ? Math.min(page - 1, totalPages) : null;
  // One parse for every link: after the first, `page` and `per_page` are where each link's own
  // copy of the URL would have them, so setting them again gives the same URL.
  const url = new URL(requestUrl);
  const link = (p: number, rel: string) => {
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
