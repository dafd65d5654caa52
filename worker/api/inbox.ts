import { createRoute, z } from '@hono/zod-openapi';
import type { Context, MiddlewareHandler } from 'hono';
import { countApiCall, isAdminToken, presentedToken, scopesMissingFor } from '../auth/api-auth';
import { safeEqual } from '../auth/crypto';
import { SourceTypeSchema } from '../../shared/schemas';
import { isoNow } from '../clock';
import { publicOrigin } from '../config';
import type { ApiEnv, Caller, Env } from '../env';
import * as service from '../services/inbox';
import { hashSecret } from '../store/tokens';
import { pageOf, paginationHeaders, paginationQuery, windowOf, type Page } from './pagination';
import { instantParam } from './params';
import { AccessAlertSchema, InboxAccessRequestSchema, KIND_OF_SOURCE_TYPE, OwnAccessRequestSchema, presentAccessAlert, presentInboxItem, presentOwnRequest } from './presenters/inbox';
import { createApiRouter } from './router';

/**
 * Knock's additions to GitLab's access-request API: the owners' inbox, every pending request the
 * caller may act on in one request (GitLab has no such endpoint: a client asks each group and
 * project), and the requesters' own view with outcomes. Neither calls any group's or project's
 * object: a manager's inbox is one call to their own `User` object, the requesters' view the index
 * partitions' (docs/architecture.md).
 */

const InboxQuery = z.object({
  source_type: SourceTypeSchema.optional().openapi({ description: '`Namespace` (groups) or `Project`' }),
  min_requested_at: instantParam().optional().openapi({ description: 'Only requests made at or after this instant (ISO 8601)' }),
  ...paginationQuery,
});
type InboxQuery = z.infer<typeof InboxQuery>;
const IfNoneMatch = z.string().max(8192).optional().openapi({ description: 'An ETag of an earlier answer' });

/** Private: the answer is the caller's; no-cache: a cached copy is revalidated with its ETag. */
const CACHE_CONTROL = 'private, no-cache';

/**
 * A mark of the user an inbox ETag names, keyed (so only this deployment makes it): an ETag
 * naming a user therefore came from that user's own answer, and a poll may ask their `User` object
 * before the token is checked (`answerInboxPoll`) without letting anyone reach the object of a
 * user they never got an answer for.
 */
const userMark = async (env: Env, userId: number) => (await hashSecret(env, `inbox-etag:${userId}`)).slice(0, 16);

/**
 * The inbox's entity tag (RFC 9110 §8.8.3): the caller's inbox version, with whose inbox (theirs,
 * with its mark, or every request for an administrator) and the query, since each page and filter
 * is its own representation. Weak: an equal tag means an equivalent answer, not the same bytes. A
 * user's tag given to an OAuth access token names the token's grant after the mark (`o<grant>`),
 * which their `User` object holds, so a poll sending it back can ask that object about the token
 * itself (`answerInboxPoll`), found by its grant and keyed hash.
 */
const partsOf = (whose: { userId: number; mark: string; grantId: string | null } | 'all', page: Page, q: InboxQuery) => {
  const [head, who] = whose === 'all' ? ['all', ''] : [String(whose.userId), `${whose.mark}${whose.grantId === null ? '' : `o${whose.grantId}`}`];
  return { head: `${head}.`, tail: `.${who}.${page.page}.${page.perPage}.${q.source_type ?? ''}.${q.min_requested_at ?? ''}` };
};
const etagParts = async (env: Env, caller: Caller, page: Page, q: InboxQuery, mark?: string) =>
  partsOf(caller.admin ? 'all' : { userId: caller.id, mark: mark ?? (await userMark(env, caller.id)), grantId: caller.grantId }, page, q);
const etagOf = (parts: { head: string; tail: string }, version: number) => `W/"${parts.head}${version}${parts.tail}"`;

/**
 * The inbox version named by `If-None-Match` (RFC 9110 §13.1.2, weak comparison): `any` for `*`,
 * else the version of the first of its tags that is this caller's and query's, or null.
 */
const knownVersion = (header: string | undefined, parts: { head: string; tail: string }): service.KnownVersion => {
  if (!header) return null;
  if (header.trim() === '*') return 'any';
  for (const tag of header.split(',')) {
    const opaque = /^\s*(?:W\/)?"([^"]*)"\s*$/.exec(tag)?.[1];
    if (!opaque?.startsWith(parts.head) || !opaque.endsWith(parts.tail)) continue;
    const version = opaque.slice(parts.head.length, opaque.length - parts.tail.length);
    if (/^[0-9]{1,15}$/.test(version)) return Number(version);
  }
  return null;
};

/**
 * The user an inbox ETag names, the mark it carries and, for one given to an OAuth access token,
 * its grant (`W/"<user id>.<version>.<mark>[o<grant>].…"`): the first of `If-None-Match`'s that has them.
 */
const userNamedBy = (header: string | undefined): { userId: number; mark: string; grantId: string | null } | null => {
  for (const tag of header?.split(',') ?? []) {
    const m = /^\s*(?:W\/)?"([0-9]{1,15})\.[0-9]{1,15}\.([0-9a-f]{16})(?:o([A-Za-z0-9_-]{1,64}))?\./.exec(tag);
    if (m) return { userId: Number(m[1]), mark: m[2], grantId: m[3] ?? null };
  }
  return null;
};

/** A user's inbox poll asked before the token was checked through KV, with the user's mark. */
type EarlyAsk = { userId: number; mark: string; poll: Promise<service.InboxPoll> };

/** What each poll asked before its token was checked (see `answerInboxPoll`). */
const earlyAsks = new WeakMap<Request, Promise<EarlyAsk | null>>();

/** The query as the route's validator reads it (a name given twice is a list, which the schema refuses). */
const queryOf = (c: Context) => Object.fromEntries(Object.entries(c.req.queries()).map(([k, v]) => [k, v.length === 1 ? v[0] : v]));

/**
 * Mounted before authentication on `GET /access_requests`. A poll whose ETag names a user with that
 * user's mark makes one call to the user's `User` object: their inbox version, and, for an ETag
 * given to an OAuth access token, whether the token presented (its keyed hash, as the KV record is
 * keyed) is a live access token of theirs (the object owns the token pairs; KV holds copies). When
 * it is, its scopes allow this call, and the version is the one the ETag names, the poll is counted
 * against the token's API limit and answered 304 here, without the KV read. Otherwise the
 * authentication runs as for any call (after that call; for a personal or impersonation token's
 * ETag, which asks only the version, beside it), and the version is used only once the token
 * proved to be that user's (`inboxRoutes`); for any other caller it is dropped unread. A request
 * without a token, with ADMIN_TOKEN, or whose mark this deployment did not make, asks nothing.
 */
export const answerInboxPoll: MiddlewareHandler<ApiEnv> = async (c, next) => {
  const token = c.req.method === 'GET' ? presentedToken(c.req.raw.headers) : null;
  const header = c.req.header('if-none-match');
  const named = token && !isAdminToken(c.env, token) && IfNoneMatch.safeParse(header).success ? userNamedBy(header) : null;
  if (!token || !named) return next();
  const ask = (async (): Promise<EarlyAsk | null> => {
    const mark = await userMark(c.env, named.userId);
    if (!safeEqual(named.mark, mark)) return null;
    const poll = service.pollInbox(c.env, named.userId, named.grantId === null ? null : { grantId: named.grantId, accessHash: await hashSecret(c.env, token) });
    // Dropped unread when the caller is someone else: its failure is nobody's.
    poll.catch(() => undefined);
    return { userId: named.userId, mark, poll };
  })();
  ask.catch(() => undefined);
  earlyAsks.set(c.req.raw, ask);
  if (named.grantId !== null) {
    const early = await ask;
    const poll = await early?.poll.catch(() => null);
    const q = InboxQuery.safeParse(queryOf(c));
    if (early && poll?.token && !poll.token.admin && !scopesMissingFor(c, poll.token.scopes) && q.success) {
      const parts = partsOf(named, pageOf(q.data), q.data);
      if (knownVersion(header, parts) === poll.version) {
        await countApiCall(c.env, { tokenId: null, grantId: named.grantId, userId: named.userId });
        return c.body(null, 304, { ETag: etagOf(parts, poll.version), 'Cache-Control': CACHE_CONTROL });
      }
    }
  }
  await next();
};

/** What this poll asked early, if it asked for the caller's own inbox. */
const earlyAskOf = async (request: Request, caller: Caller): Promise<EarlyAsk | null> => {
  const early = await earlyAsks.get(request);
  return early && !caller.admin && early.userId === caller.id ? early : null;
};

const tags = ['Access requests inbox (Knock)'];

const inbox = createRoute({
  method: 'get',
  path: '/access_requests',
  tags,
  summary: 'Knock extension: every pending access request the caller may act on, across all groups and projects, oldest first',
  description:
    'Requests of every group the caller owns and every project they maintain or own, directly or through an ancestor group (administrators: every request). ' +
    'Each carries its source and the highest access_level the caller may approve it at. The ETag changes exactly when this list changes; ' +
    'send it back in If-None-Match to get 304 Not Modified while nothing changed.',
  request: {
    query: InboxQuery,
    headers: z.object({ 'if-none-match': IfNoneMatch }),
  },
  responses: {
    200: {
      description: 'Pending requests',
      headers: { ETag: { schema: { type: 'string' }, description: 'The version of this answer' } },
      content: { 'application/json': { schema: z.array(InboxAccessRequestSchema) } },
    },
    304: { description: 'Not modified: If-None-Match named the current version' },
  },
});

const own = createRoute({
  method: 'get',
  path: '/user/access_requests',
  tags,
  summary: "Knock extension: the caller's own access requests: those pending, and how the others ended in the last 30 days",
  description:
    'status is pending, approved (with access_level and expires_at), denied (with denial_reason, if given), withdrawn, lapsed (expired undecided under the rules), ' +
    'or expired (approved with an end that has come). decided_by is who decided (null: a rule, or Knock). reason, requested_access_level and requested_expires_at are what was asked. ' +
    'An outcome is listed for 30 days after it happened (an approval with an expiry: 30 days after the expiry). Oldest first.',
  request: { query: z.object(paginationQuery) },
  responses: { 200: { description: 'Your requests', content: { 'application/json': { schema: z.array(OwnAccessRequestSchema) } } } },
});

const alerts = createRoute({
  method: 'get',
  path: '/user/access_alerts',
  tags,
  summary: "Knock extension: the caller's alerts: break-glass grants and access that ends soon, where they manage",
  description:
    'break_glass: access a break-glass rule granted in the last 24 hours in a group or project the caller owns (directly or through an ancestor group). ' +
    "expiring: another member's access that ends soon (within a day of an end given as a date, an hour of a date-time), where the caller may answer access requests. " +
    'Newest first. The caller\'s own access is in /user/access_requests.',
  responses: { 200: { description: 'Your alerts', content: { 'application/json': { schema: z.array(AccessAlertSchema) } } } },
});

export const inboxRoutes = createApiRouter()
  .openapi(inbox, async (c) => {
    const q = c.req.valid('query');
    const page = pageOf(q);
    const early = await earlyAskOf(c.req.raw, c.var.caller);
    const parts = await etagParts(c.env, c.var.caller, page, q, early?.mark);
    const filter = { kind: q.source_type && KIND_OF_SOURCE_TYPE[q.source_type], minRequestedAt: q.min_requested_at };
    const known = knownVersion(c.req.valid('header')['if-none-match'], parts);
    const { version, page: found } = await service.readInbox(c.env, c.var.caller, filter, windowOf(page), known, early?.poll.then((p) => p.version));
    const headers = { ETag: etagOf(parts, version), 'Cache-Control': CACHE_CONTROL };
    if (!found) return c.body(null, 304, headers);
    const origin = publicOrigin(c.env, c.req.url);
    return c.json(
      found.items.map((r) => presentInboxItem(r, origin)),
      200,
      { ...paginationHeaders(c, page, found.total), ...headers },
    );
  })
  .openapi(own, async (c) => {
    const page = pageOf(c.req.valid('query'));
    const { total, items } = await service.ownRequests(c.env, c.var.caller, windowOf(page));
    const now = isoNow();
    return c.json(
      items.map((r) => presentOwnRequest(r, now)),
      200,
      { ...paginationHeaders(c, page, total), 'Cache-Control': 'private, no-store' },
    );
  })
  .openapi(alerts, async (c) => c.json((await service.accessAlerts(c.env, c.var.caller)).map(presentAccessAlert), 200, { 'Cache-Control': 'private, no-store' }));
