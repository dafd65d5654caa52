// A small in-memory stand-in for Knock's HTTP API, typed by the same schemas as the server's
// responses (shared/schemas.ts), enough for the extension's unit tests: authorization server
// metadata (RFC 8414), the token endpoint (code exchange and refresh with rotation, RFC 6749
// §4.1.3 and §6), revocation (RFC 7009), the listing routes, approve, deny, request, and 429s;
// and Knock's inbox (`GET /access_requests` with its ETag, `GET /user/access_requests`, `GET /user/access_alerts`), unless it
// plays a plain GitLab, which has neither.

import type { AccessAlert, AccessRequest, Group, InboxAccessRequest, OwnAccessRequest, Project, User } from '../../shared/api-types';

export const SERVER = 'https://knock.test';
const CREATED_AT = '2026-11-01T09:00:00.000Z';

interface Source {
  kind: 'group' | 'project';
  record: Group | Project;
  /** The signed-in user's level there. */
  level: number;
  requests: AccessRequest[];
}

export function accessRequest(id: number, username: string, name: string, requestedAt: string): AccessRequest {
  return {
    id,
    username,
    name,
    state: 'active',
    locked: false,
    avatar_url: null,
    web_url: `${SERVER}/${username}`,
    created_at: requestedAt,
    requested_at: requestedAt,
    reason: null,
    access_level: null,
    expires_at: null,
    approvals_required: 1,
    approvals: [],
  };
}

/** `origin` is where the server says it is (its issuer, RFC 8414 §2). */
export function createFakeKnock(origin: string = SERVER) {
  let issued = 0;
  const server = {
    origin,
    user: {
      id: 1,
      username: 'alice',
      name: 'Alice Owner',
      state: 'active',
      locked: false,
      avatar_url: null,
      web_url: `${SERVER}/alice`,
      created_at: CREATED_AT,
    } as User,
    sources: [] as Source[],
    /** A plain GitLab (or an older Knock): no `/access_requests`, no `/user/access_requests` (404). */
    plainGitLab: false,
    /** The most items a page of the inbox holds, whatever `per_page` asks. */
    inboxPageSize: 100,
    /** The signed-in user's own requests, as `GET /user/access_requests` lists them. */
    ownRequests: [] as OwnAccessRequest[],
    /** The manager's alerts, as `GET /user/access_alerts` lists them. */
    alerts: [] as AccessAlert[],
    /** The `If-None-Match` of each inbox request (null when none was sent). */
    inboxConditions: [] as (string | null)[],
    validAccessTokens: new Set<string>(),
    /** Personal access tokens that work (sent as PRIVATE-TOKEN). */
    personalAccessTokens: new Set<string>(),
    personalAccessTokenCalls: 0,
    /** Refresh tokens that still work; each is used once (rotation). */
    liveRefreshTokens: new Set<string>(),
    /** What the token endpoint answers to a code exchange, when not new tokens. */
    exchangeFailure: null as null | { status: number; body: unknown },
    /** What the token endpoint answers to a refresh, when not the normal rotation. */
    refreshFailure: null as null | { status: number; body: unknown },
    /** Answer the next N API calls with 429 and this Retry-After. */
    rateLimit: { remaining: 0, retryAfter: '120' },
    /** Approvals the server refuses, with this message. */
    refuseDecisions: null as null | { status: number; message: string },
    approvals: [] as { kind: string; id: number; userId: number; accessLevel: number }[],
    denials: [] as { kind: string; id: number; userId: number }[],
    accessRequestsMade: [] as { kind: string; idOrPath: string }[],
    calls: [] as string[],
    refreshCalls: 0,
    /** The form parameters of every token endpoint request, in order. */
    tokenRequests: [] as Record<string, string>[],
    /** The form parameters of every revocation request. */
    revocations: [] as Record<string, string>[],
    /** Where the metadata sends token requests (moved to check that clients follow it). */
    tokenPath: '/login/oauth/access_token',
    /** RFC 8414 §2: what `/.well-known/oauth-authorization-server` says. */
    metadata() {
      return {
        issuer: origin,
        authorization_endpoint: `${origin}/login/oauth/authorize`,
        token_endpoint: `${origin}${server.tokenPath}`,
        revocation_endpoint: `${origin}/login/oauth/revoke`,
        response_types_supported: ['code'],
        grant_types_supported: ['authorization_code', 'refresh_token'],
        token_endpoint_auth_methods_supported: ['none'],
        code_challenge_methods_supported: ['S256'],
        authorization_response_iss_parameter_supported: true,
      };
    },

    /** A fresh token pair, as if the user had just signed in. */
    issueTokens() {
      issued += 1;
      const pair = { access_token: `access-${issued}`, refresh_token: `refresh-${issued}` };
      server.validAccessTokens.add(pair.access_token);
      server.liveRefreshTokens.add(pair.refresh_token);
      return {
        ...pair,
        token_type: 'Bearer' as const,
        expires_in: 28800,
        scope: 'api',
        created_at: Math.floor(Date.now() / 1000),
      };
    },

    addGroup(id: number, path: string, level: number, requests: AccessRequest[] = []) {
      const record: Group = {
        id,
        web_url: `${SERVER}/groups/${path}`,
        name: path,
        path,
        description: '',
        visibility: 'private',
        full_name: path,
        full_path: path,
        parent_id: null,
        request_access_enabled: true,
        require_two_factor_authentication: false,
        avatar_url: null,
        created_at: CREATED_AT,
      };
      server.sources.push({ kind: 'group', record, level, requests });
    },

    addProject(id: number, pathWithNamespace: string, level: number, requests: AccessRequest[] = []) {
      const path = pathWithNamespace.split('/').at(-1)!;
      const parentPath = pathWithNamespace.split('/').slice(0, -1).join('/');
      const record: Project = {
        id,
        description: '',
        name: path,
        name_with_namespace: pathWithNamespace.replace('/', ' / '),
        path,
        path_with_namespace: pathWithNamespace,
        created_at: CREATED_AT,
        web_url: `${SERVER}/${pathWithNamespace}`,
        avatar_url: null,
        visibility: 'private',
        request_access_enabled: true,
        namespace: {
          id: 1000 + id,
          name: parentPath,
          path: parentPath,
          kind: 'group',
          full_path: parentPath,
          parent_id: null,
          avatar_url: null,
          web_url: `${SERVER}/groups/${parentPath}`,
        },
      };
      server.sources.push({ kind: 'project', record, level, requests });
    },

    fetch: async (input: string | URL | Request, init: RequestInit = {}): Promise<Response> => {
      const url = new URL(typeof input === 'string' || input instanceof URL ? input : input.url);
      const method = (init.method ?? 'GET').toUpperCase();
      server.calls.push(`${method} ${url.pathname}`);
      if (method === 'GET' && url.pathname === '/.well-known/oauth-authorization-server') return json(200, server.metadata());
      if (method === 'POST' && url.pathname === server.tokenPath) return tokenEndpoint(formOf(init));
      if (method === 'POST' && url.pathname === '/login/oauth/revoke') {
        server.revocations.push(formOf(init));
        return new Response(null, { status: 200 });
      }

      // RFC 6750 §2.1, or GitLab's PRIVATE-TOKEN header (personal access tokens).
      const headers = new Headers(init.headers);
      const token = headers.get('PRIVATE-TOKEN') ?? headers.get('Authorization')?.replace(/^Bearer /, '');
      if (token && server.personalAccessTokens.has(token)) server.personalAccessTokenCalls += 1;
      if (token && server.personalAccessTokens.has(token)) {
        if (!headers.has('PRIVATE-TOKEN')) return json(400, { message: 'fake Knock: send personal access tokens as PRIVATE-TOKEN' });
      } else if (!token || !server.validAccessTokens.has(token)) {
        if (headers.has('PRIVATE-TOKEN')) return json(401, { message: '401 Unauthorized' });
        return json(401, { error: 'invalid_token', error_description: 'Token is expired.' });
      }
      if (server.rateLimit.remaining > 0) {
        server.rateLimit.remaining -= 1;
        return json(429, { message: '429 Too Many Requests' }, { 'Retry-After': server.rateLimit.retryAfter });
      }
      return api(method, url, headers);
    },
  };

  /** OAuth requests are form-encoded (RFC 6749 §4.1.3, RFC 7009 §2.1). */
  function formOf(init: RequestInit): Record<string, string> {
    const type = new Headers(init.headers).get('Content-Type') ?? '';
    if (!type.startsWith('application/x-www-form-urlencoded')) throw new Error(`fake Knock: expected a form, got ${type}`);
    return Object.fromEntries(new URLSearchParams(String(init.body)));
  }

  function tokenEndpoint(body: Record<string, string>): Response {
    server.tokenRequests.push(body);
    if (body.client_id !== 'knock-extension') return json(401, { error: 'invalid_client', error_description: 'Unknown client.' });
    if (body.grant_type === 'authorization_code') {
      if (server.exchangeFailure) return json(server.exchangeFailure.status, server.exchangeFailure.body);
      return json(200, server.issueTokens());
    }
    if (body.grant_type !== 'refresh_token') return json(400, { error: 'unsupported_grant_type' });
    server.refreshCalls += 1;
    if (server.refreshFailure) return json(server.refreshFailure.status, server.refreshFailure.body);
    if (!server.liveRefreshTokens.delete(body.refresh_token ?? '')) {
      return json(400, { error: 'invalid_grant', error_description: 'The refresh token is invalid.' });
    }
    return json(200, server.issueTokens());
  }

  /** Every pending request the user may act on, oldest first, with its source (Knock's inbox). */
  function inboxItems(): InboxAccessRequest[] {
    return server.sources
      .filter((s) => s.level >= (s.kind === 'group' ? 50 : 40))
      .flatMap((s) =>
        s.requests.map((request) => ({
          ...request,
          source_type: s.kind === 'group' ? ('Namespace' as const) : ('Project' as const),
          source_id: s.record.id,
          source_full_path: 'full_path' in s.record ? s.record.full_path : s.record.path_with_namespace,
          source_name: s.record.name,
          max_access_level: s.level,
        })),
      )
      .sort((a, b) => a.requested_at.localeCompare(b.requested_at));
  }

  /** A page of a list, with GitLab's pagination headers. */
  function paged<T>(items: T[], url: URL, headers: Record<string, string> = {}): Response {
    const perPage = Math.min(Number(url.searchParams.get('per_page') ?? 20), server.inboxPageSize);
    const page = Number(url.searchParams.get('page') ?? 1);
    const next = page * perPage < items.length ? String(page + 1) : '';
    return json(200, items.slice((page - 1) * perPage, page * perPage), { 'X-Next-Page': next, ...headers });
  }

  function api(method: string, url: URL, headers: Headers): Response {
    const path = url.pathname.replace(/^\/api\/v4/, '');
    const minLevel = Number(url.searchParams.get('min_access_level') ?? 0);
    if (method === 'GET' && path === '/user') return json(200, server.user);
    if (method === 'GET' && path === '/access_requests' && !server.plainGitLab) {
      // The ETag names the whole list's version, and the page (RFC 9110 §8.8.3).
      const items = inboxItems();
      const etag = `W/"${hashOf(JSON.stringify(items))}.${url.searchParams.get('page') ?? 1}"`;
      const condition = headers.get('If-None-Match');
      server.inboxConditions.push(condition);
      if (condition === etag) return new Response(null, { status: 304, headers: { ETag: etag } });
      return paged(items, url, { ETag: etag });
    }
    if (method === 'GET' && path === '/user/access_requests' && !server.plainGitLab) return paged(server.ownRequests, url);
    if (method === 'GET' && path === '/user/access_alerts' && !server.plainGitLab) return Response.json(server.alerts);
    if (method === 'GET' && (path === '/groups' || path === '/projects')) {
      const kind = path === '/groups' ? 'group' : 'project';
      const records = server.sources.filter((s) => s.kind === kind && s.level >= minLevel).map((s) => s.record);
      return json(200, records, { 'X-Next-Page': '' });
    }
    const match = path.match(/^\/(groups|projects)\/([^/]+)\/access_requests(?:\/(\d+)(\/approve)?)?$/);
    if (!match) return json(404, { error: '404 Not Found' });
    const [, route, rawId, userId, approve] = match;
    const kind = route === 'groups' ? 'group' : 'project';
    const idOrPath = decodeURIComponent(rawId!);
    if (method === 'DELETE' && Number(userId) === server.user.id) {
      // The user withdraws their own request (GitLab: the same DELETE, with their own id).
      const sourceType = kind === 'group' ? 'Namespace' : 'Project';
      const own = server.ownRequests.find((r) => r.source_type === sourceType && String(r.source_id) === idOrPath && r.status === 'pending');
      if (!own) return json(404, { message: '404 Not found' });
      server.ownRequests = server.ownRequests.map((r) => (r === own ? { ...r, status: 'withdrawn', decided_at: new Date().toISOString() } : r));
      return new Response(null, { status: 204 });
    }
    const source = server.sources.find(
      (s) =>
        s.kind === kind &&
        (String(s.record.id) === idOrPath ||
          ('full_path' in s.record ? s.record.full_path : s.record.path_with_namespace) === idOrPath),
    );
    if (method === 'POST' && !userId) {
      server.accessRequestsMade.push({ kind, idOrPath });
      if (!source) return json(404, { message: `404 ${kind === 'group' ? 'Group' : 'Project'} Not Found` });
      return json(201, accessRequest(server.user.id, server.user.username, server.user.name, new Date().toISOString()));
    }
    if (!source) return json(404, { message: '404 Not Found' });
    if (method === 'GET' && !userId) return json(200, source.requests, { 'X-Next-Page': '' });
    if (server.refuseDecisions) return json(server.refuseDecisions.status, { message: server.refuseDecisions.message });
    const pending = source.requests.find((r) => r.id === Number(userId));
    if (!pending) return json(404, { message: '404 Not found' });
    source.requests = source.requests.filter((r) => r !== pending);
    if (method === 'PUT' && approve) {
      const accessLevel = Number(url.searchParams.get('access_level') ?? 30);
      server.approvals.push({ kind, id: source.record.id, userId: pending.id, accessLevel });
      return json(201, { ...pending, access_level: accessLevel });
    }
    server.denials.push({ kind, id: source.record.id, userId: pending.id });
    return new Response(null, { status: 204 });
  }

  return server;
}

/** A short digest of a string (FNV-1a), enough for a fake ETag. */
function hashOf(text: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193) >>> 0;
  return hash.toString(16);
}

function json(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { 'Content-Type': 'application/json', ...headers },
  });
}

export type FakeKnock = ReturnType<typeof createFakeKnock>;
