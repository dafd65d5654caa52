/// <reference types="vite/client" />
// The guard of "a cache is a promise about change" (docs/architecture.md, "Caches"): every route
// that changes something must say which caches and copies hold what it changes, and name a test
// that makes the change and reads it back through them; or say why it changes none. A new route
// fails here until someone has thought about it.
import { describe, expect, it } from 'vitest';
import { app } from '../../worker/app';
import { call } from './support/http';

/** Each cache or copy of something that can change, as docs/architecture.md names it. */
const CACHES = {
  registry:
    'Registry records (worker/services/registry-cache.ts, per isolate) and the settings and full path copied into each Namespace object: path, visibility, request_access_enabled, deletion, a user\'s rename (their personal projects)',
  clients: "Applications (worker/services/clients.ts, per isolate; the copy in each application's ClientHolders object): deletion",
  tokens: 'Token records in KV (worker/store/tokens.ts), read on every API call: revocation of OAuth, personal and impersonation tokens, and of every token of a blocked, deactivated or deleted user',
  memberships: "The membership index (memberships in each IndexPartition index:<p>), fed by each Namespace object's outbox: member changes, a user's deletion",
  requesters: "The requester index (pending_requests in each IndexPartition index:<p>) and requesters' names copied into requests: requests made and gone, a user's rename, block or deletion",
  users:
    'The user in the grant authority (user_state in each User object) and the profile copied into each token record and root\'s caller record: user edits, blocks, deactivation, deletion',
  logins:
    "Login records in each name partition (SignIn name:<p>, docs/architecture.md \"Who owns each fact\"), read by every sign-in: a user's creation, rename, new password, block, deactivation, activation and deletion",
  copies:
    "Copies of registry rows in the index partitions of their trees (IndexPartition index:<p>, pushed from the Directory's registry_outbox), read by the lists of what a user reaches and the finder's misses; and the names and states of users with rows there, read by the members lists: creations, settings and path changes, the paths below a renamed group, a user's rename or block, deletions",
  pages:
    "Pages of access requests a group's or project's object last read (its memory, worker/durable/namespace/core.ts requestPage): requests made, approvals counted, approved, denied or withdrawn; a requester's rename, block, deactivation or deletion",
  sessions: "Browser sessions (each user's User object): a password change, a block, deactivation or deletion ends them",
  signingKeys:
    'Signing keys (their SigningKeys object; worker/oauth/signing-keys.ts keeps them a minute per isolate; the JWKS may be cached five minutes by clients): a rotation',
  inbox:
    "The owners' inbox (the index partitions' inbox rows, each manager's share of them in their User, and the User's inbox version, its ETag), fed by each Namespace object's outbox and the partitions' inbox outbox: requests made, approved, denied or withdrawn; member changes; a source's rename, settings or deletion; a requester's rename, block, deactivation or deletion",
} as const;
type Cache = keyof typeof CACHES;

/** An invalidation test: its file in test/worker, and its title as written there. */
type Covered = readonly [file: string, title: string];
type Effect = { caches: Partial<Record<Cache, readonly Covered[]>> } | { none: string } | { through: string };

const changes = (caches: Partial<Record<Cache, readonly Covered[]>>): Effect => ({ caches });
const none = (why: string): Effect => ({ none: why });
/** A console form that calls the same service as this /api/v4 route: that route's caches and tests are its own. */
const through = (apiRoute: string): Effect => ({ through: apiRoute });

const RULES_UNCACHED = "changes a group's or project's own rules, which each request reads from that object and its ancestors' (no copy)";
const NOTHING_CACHED_YET = 'creates something new: every cache holds only what it found, and a miss asks the source';

const renamed: Covered = ['namespace-settings.test.ts', 'keeps the id, frees the old path, moves everything below, and the old path answers 404 at once'];
const elsewhere: Covered = ['namespace-settings.test.ts', "another isolate's cached path (an older version) is refused by the object and looked up again"];
const projectMoved: Covered = ['namespace-settings.test.ts', "a project's new path is found at once, and its old path answers 404 also where an isolate still remembers it"];
const madePrivate: Covered = ['namespace-settings.test.ts', 'making it private hides it from outsiders at once'];
const requestsOff: Covered = ['namespace-settings.test.ts', 'turning requests off refuses new ones (403) and keeps pending ones listable and actionable'];
const deleted: Covered = ['namespace-settings.test.ts', 'deletes with members and pending requests (202); the id and path answer 404; the path is free'];
const memberEdited: Covered = ['members.test.ts', 'edits level and expiry; the index follows; removal too'];
const memberAdded: Covered = ['access-requests-inheritance.test.ts', "a group Owner manages the requests of the group's projects and subgroups"];
const addedRequester: Covered = ['members.test.ts', 'adding a requester removes their pending request in the same step'];
const approved: Covered = ['access-requests-concurrency.test.ts', 'follows approvals: the new member sees the project at their level'];
const requesterIndex: Covered = ['namespace-settings.test.ts', 'follows approvals and withdrawals; renaming the user (PUT /users/:id) renames the stored names'];
const requestIndexed: Covered = ['namespace-settings.test.ts', 'knows where a user waits; blocking the user empties every owner list'];
const twoFactorOn: Covered = ['two-factor.test.ts', 'enrols with a code from the app, shows ten recovery codes once, and tells the API'];
const twoFactorOff: Covered = ['two-factor.test.ts', 'is turned off by the user with their password; sign-in then needs the password only'];
const blocked: Covered = ['user-lifecycle.test.ts', 'answers 201 true; every token, refresh token, code and session of the user ends at once; sign-in is refused with a reason'];
const blockedRefresh: Covered = ['oauth-caches.test.ts', 'gets no new tokens from a refresh from the moment the block answers'];
const blockByAlarm: Covered = ['user-lifecycle.test.ts', "is finished by the Directory's alarm: tokens end, refreshes and codes are refused, the request is gone"];
const deactivated: Covered = ['user-lifecycle.test.ts', 'deactivating ends everything the user holds, as a block does; activating lets them sign in again'];
const unblocked: Covered[] = [
  ['user-lifecycle.test.ts', 'answers 201 true and lets the user sign in and get new tokens; the ended ones stay ended'],
  ['oauth-caches.test.ts', 'is served again once unblocked, through a new authorization: the grants the block ended stay ended'],
];
const userDeleted: Covered = ['user-lifecycle.test.ts', 'answers 204; the user, their tokens, session, memberships, pending requests and personal projects are gone'];
const renamedEverywhere: Covered = ['user-lifecycle.test.ts', 'shows a rename through every copy: OAuth and personal tokens, pending requests, members lists, the browser session'];
const loginCreated: Covered = ['sign-in-partitions.test.ts', 'has the user as soon as the creation answered, and moves with a rename'];
const loginChanged: Covered = ['sign-in-partitions.test.ts', 'takes a new password, a block and an unblock, and forgets a deleted user'];
const listed = (title: string): Covered => ['namespace-lists.test.ts', title];
const listedNew = listed('show a new group, subgroup and project at once, field for field as the registry has them');
const listedRenamed = listed('follow a rename of the top-level group down the tree, and a settings change, before the change answers');
const listedDeleted = listed('leave out a deleted project');
const memberNames: Covered = ['registry-partitions.test.ts', 'asks the Directory for a member once, then shows their rename and block from the copy'];
const pageReadAgain: Covered = ['access-requests-fast-path.test.ts', 'answers a page read again with every change since: a new request, a rename, an approval counted, a denial, a block'];
const inboxRequests: Covered = ['inbox.test.ts', 'answers 304 to the current ETag from one call to the caller’s User, no index partition and no group or project object, 200 with a new ETag after each change'];
const inboxMembers: Covered = ['inbox.test.ts', 'shows a new Maintainer their project at once, and forgets a removed one'];
const inboxSources: Covered = ['inbox.test.ts', 'shows a renamed source by its new name and path, keeps requests when requests are turned off or visibility changes, and drops them when it is deleted'];
const inboxRequesters: Covered = ['inbox.test.ts', 'drops the requests of a blocked, deactivated or deleted requester, with a new ETag'];
const HOOKS_OWN_OBJECT = "hooks are kept and read in their group's or project's own object at each delivery; the opened signing key is remembered under its sealed value, which a new secret changes";
const SENDS = 'sends a delivery now and logs it in the hook\'s object; nothing else keeps a copy';

/** What the token service's POST routes do to the caches, by Knock's path (GitLab's path is the same handler). */
const TOKEN_SERVICE: Record<string, Effect> = {
  '/login/oauth/authorize': none('records consent and a code in the grant authority, which is read on every redemption'),
  '/login/oauth/introspect': none('reads only'),
  '/login/oauth/userinfo': none('reads only (OpenID Connect Core 1.0 §5.3.1: GET or POST)'),
  '/login/oauth/access_token': changes({
    tokens: [
      ['oauth-grants.test.ts', 'each refresh returns a new pair and ends the old pair'],
      ['oauth-grants.test.ts', 'refuses a replayed code and revokes every token issued from it'],
    ],
  }),
  '/login/oauth/revoke': changes({
    tokens: [
      ['oauth-revocation.test.ts', 'revoking the refresh token ends the grant and its access token'],
      ['oauth-revocation.test.ts', 'revoking the access token ends the grant too, whatever the hint says'],
    ],
  }),
};

/**
 * Every route that changes something (POST, PUT, PATCH, DELETE), keyed by method and path as the
 * OpenAPI document writes it (for /api/v4) or as the Worker routes it (pages and OAuth).
 */
const ROUTES: Record<string, Effect> = {
  // ---- /api/v4 ----
  'POST /api/v4/users': changes({ logins: [loginCreated] }),
  'PUT /api/v4/users/{id}': changes({
    users: [
      renamedEverywhere,
      ['user-lifecycle.test.ts', 'shows a rename of root through the admin token at once, and root stays the built-in administrator'],
      ['user-lifecycle.test.ts', 'changes username, name, email and the administrator flag; answers the user with private fields'],
    ],
    tokens: [['personal-access-tokens.test.ts', 'is still itself: it shows the new name, /self answers it, and its use is recorded']],
    requesters: [renamedEverywhere, requesterIndex],
    pages: [pageReadAgain],
    registry: [['user-lifecycle.test.ts', "moves the user's personal namespace with the username: its projects answer at the new path, the old one is 404"]],
    copies: [listed("follow a user's rename into their personal projects' paths"), memberNames],
    sessions: [['user-lifecycle.test.ts', 'a new password replaces the old one and ends the browser sessions']],
    logins: [loginCreated, loginChanged],
    inbox: [
      ['inbox.test.ts', 'shows a renamed requester by their new name, with a new ETag'],
      ['inbox.test.ts', 'shows the new full path of a project in a renamed user’s personal namespace'],
    ],
  }),
  'POST /api/v4/users/{id}/block': changes({
    tokens: [blocked, blockByAlarm],
    users: [blocked, blockedRefresh, blockByAlarm],
    requesters: [requestIndexed, blocked],
    pages: [pageReadAgain],
    sessions: [blocked],
    inbox: [inboxRequesters],
    logins: [loginChanged, blocked],
    copies: [memberNames],
  }),
  'POST /api/v4/users/{id}/deactivate': changes({ tokens: [deactivated], users: [deactivated], requesters: [deactivated], sessions: [deactivated], inbox: [inboxRequesters], logins: [deactivated] }),
  'PATCH /api/v4/users/{id}/disable_two_factor': changes({ users: [['two-factor.test.ts', 'lets an administrator reset a user: 204, then 400 as nothing is left to disable']] }),
  'POST /api/v4/users/{id}/unblock': changes({ users: unblocked, logins: [loginChanged, unblocked[0]] }),
  'POST /api/v4/users/{id}/activate': changes({ users: [deactivated], logins: [deactivated] }),
  'DELETE /api/v4/users/{id}': changes({
    tokens: [userDeleted],
    users: [userDeleted],
    sessions: [userDeleted],
    memberships: [userDeleted],
    requesters: [userDeleted],
    registry: [userDeleted],
    copies: [listed('leave out the personal projects of a deleted user')],
    inbox: [inboxRequesters],
    logins: [loginChanged],
  }),
  'POST /api/v4/users/{id}/impersonation_tokens': none('issues a token: its KV record is written before the token is shown'),
  'DELETE /api/v4/users/{id}/impersonation_tokens/{token_id}': changes({ tokens: [['impersonation-tokens.test.ts', 'can be revoked, and then stop working at once']] }),
  'POST /api/v4/users/{id}/personal_access_tokens': none('issues a token: its KV record is written before the token is shown'),
  'POST /api/v4/user/personal_access_tokens': none('issues a token: its KV record is written before the token is shown'),
  'DELETE /api/v4/personal_access_tokens/{id}': changes({
    tokens: [
      ['personal-access-tokens.test.ts', 'is revoked by its user or an administrator, and the next request with it is 401'],
      ['personal-access-tokens.test.ts', "is not the user's when it is an impersonation token: 401 to read, 400 to revoke, itself included"],
    ],
  }),
  'DELETE /api/v4/personal_access_tokens/self': changes({ tokens: [['personal-access-tokens.test.ts', 'any scope may read and revoke the token it is (/personal_access_tokens/self)']] }),
  'POST /api/v4/applications': none(NOTHING_CACHED_YET),
  'DELETE /api/v4/applications/{id}': changes({
    clients: [
      ['oauth-caches.test.ts', 'cannot redeem a code through an isolate that still remembers the application, once the deletion has reached the user'],
      ['oauth-caches.test.ts', 'ends what a code redeemed in the moment before the deletion reached the user gave, even when the deletion stopped half-way'],
      ['oauth-caches.test.ts', 'gets no code through an isolate that still remembers it: neither for a user who authorized it before nor for a new one'],
      ['oauth-caches.test.ts', 'finds its grants ended when it refreshes through an isolate that still remembers it, and is unknown a minute later'],
    ],
    tokens: [['oauth-grants.test.ts', 'ends every grant made to it and every token issued under them']],
  }),
  'POST /api/v4/groups': changes({ copies: [listedNew] }),
  'POST /api/v4/projects': changes({ copies: [listedNew] }),
  'PUT /api/v4/groups/{id}': changes({
    registry: [renamed, elsewhere, madePrivate, requestsOff],
    inbox: [inboxSources],
    copies: [listedRenamed, ['two-factor-requirement.test.ts', 'leaves everyone alone once the group no longer requires it, and never touches non-members']],
  }),
  'PUT /api/v4/application/settings': none("one KV record (worker/store/instance-settings.ts), its only home, read where it is used; no copy"),
  'PUT /api/v4/projects/{id}': changes({ registry: [projectMoved, madePrivate, requestsOff], inbox: [inboxSources], copies: [listedRenamed] }),
  'DELETE /api/v4/groups/{id}': changes({ registry: [deleted], memberships: [deleted], requesters: [deleted], inbox: [inboxSources], copies: [listedDeleted] }),
  'DELETE /api/v4/projects/{id}': changes({ registry: [deleted], memberships: [deleted], requesters: [deleted], inbox: [inboxSources], copies: [listedDeleted] }),
  ...Object.fromEntries(
    ['groups', 'projects'].flatMap((kind) => [
      [`POST /api/v4/${kind}/{id}/members`, changes({ memberships: [memberAdded, memberEdited], requesters: [addedRequester], inbox: [inboxMembers] })],
      [`PUT /api/v4/${kind}/{id}/members/{user_id}`, changes({ memberships: [memberEdited], inbox: [inboxMembers] })],
      [`DELETE /api/v4/${kind}/{id}/members/{user_id}`, changes({ memberships: [memberEdited], inbox: [inboxMembers] })],
      [
        `POST /api/v4/${kind}/{id}/access_requests`,
        changes({
          requesters: [requestIndexed],
          pages: [pageReadAgain],
          inbox: [inboxRequests],
          memberships: [['access-request-rules.test.ts', 'auto_approve: an entry whose fields all hold approves at once, by the rule; others wait']],
        }),
      ],
      [`PUT /api/v4/${kind}/{id}/access_request_rules`, none(RULES_UNCACHED)],
      [`DELETE /api/v4/${kind}/{id}/access_request_rules`, none(RULES_UNCACHED)],
      [`PUT /api/v4/${kind}/{id}/access_requests/{user_id}/approve`, changes({ memberships: [approved], requesters: [requesterIndex], pages: [pageReadAgain], inbox: [inboxRequests] })],
      [`DELETE /api/v4/${kind}/{id}/access_requests/{user_id}`, changes({ requesters: [requesterIndex], pages: [pageReadAgain], inbox: [inboxRequests] })],
      [`POST /api/v4/${kind}/{id}/hooks`, none(NOTHING_CACHED_YET)],
      [`PUT /api/v4/${kind}/{id}/hooks/{hook_id}`, none(HOOKS_OWN_OBJECT)],
      [`DELETE /api/v4/${kind}/{id}/hooks/{hook_id}`, none(HOOKS_OWN_OBJECT)],
      [`POST /api/v4/${kind}/{id}/hooks/{hook_id}/test`, none(SENDS)],
      [`POST /api/v4/${kind}/{id}/hooks/{hook_id}/test/{trigger}`, none(SENDS)],
      [`POST /api/v4/${kind}/{id}/hooks/{hook_id}/events/{hook_event_id}/resend`, none(SENDS)],
      // The console's forms on a group's or project's page.
      [`POST /${kind}/{id}/-/settings`, through(`PUT /api/v4/${kind}/{id}`)],
      [`POST /${kind}/{id}/-/members`, through(`POST /api/v4/${kind}/{id}/members`)],
      [`POST /${kind}/{id}/-/members/{user_id}`, through(`PUT /api/v4/${kind}/{id}/members/{user_id}`)],
      [`POST /${kind}/{id}/-/members/{user_id}/remove`, through(`DELETE /api/v4/${kind}/{id}/members/{user_id}`)],
      [`POST /${kind}/{id}/-/access_requests`, through(`POST /api/v4/${kind}/{id}/access_requests`)],
      [`POST /${kind}/{id}/-/access_requests/withdraw`, through(`DELETE /api/v4/${kind}/{id}/access_requests/{user_id}`)],
      [`POST /${kind}/{id}/-/access_requests/{user_id}/approve`, through(`PUT /api/v4/${kind}/{id}/access_requests/{user_id}/approve`)],
      [`POST /${kind}/{id}/-/access_requests/{user_id}/deny`, through(`DELETE /api/v4/${kind}/{id}/access_requests/{user_id}`)],
      [`POST /${kind}/{id}/-/access_request_rules`, through(`PUT /api/v4/${kind}/{id}/access_request_rules`)],
      [`POST /${kind}/{id}/-/hooks`, through(`POST /api/v4/${kind}/{id}/hooks`)],
      [`POST /${kind}/{id}/-/hooks/{hook_id}`, through(`PUT /api/v4/${kind}/{id}/hooks/{hook_id}`)],
      [`POST /${kind}/{id}/-/hooks/{hook_id}/delete`, through(`DELETE /api/v4/${kind}/{id}/hooks/{hook_id}`)],
      [`POST /${kind}/{id}/-/hooks/{hook_id}/test`, through(`POST /api/v4/${kind}/{id}/hooks/{hook_id}/test/{trigger}`)],
      [`POST /${kind}/{id}/-/hooks/{hook_id}/events/{event_id}/resend`, through(`POST /api/v4/${kind}/{id}/hooks/{hook_id}/events/{hook_event_id}/resend`)],
    ]),
  ),
  // ---- the console's administration and account ----
  'POST /admin/users': none(NOTHING_CACHED_YET),
  'POST /admin/users/{id}': through('PUT /api/v4/users/{id}'),
  'POST /admin/users/{id}/delete': through('DELETE /api/v4/users/{id}'),
  'POST /admin/users/{id}/disable_two_factor': through('PATCH /api/v4/users/{id}/disable_two_factor'),
  ...Object.fromEntries(['block', 'unblock', 'deactivate', 'activate'].map((action) => [`POST /admin/users/{id}/${action}`, through(`POST /api/v4/users/{id}/${action}`)])),
  // Each selected request through the row's own approve or deny (worker/pages/bulk-requests.tsx).
  'POST /-/access_requests/bulk': through('PUT /api/v4/groups/{id}/access_requests/{user_id}/approve'),
  'POST /-/profile/personal_access_tokens': through('POST /api/v4/user/personal_access_tokens'),
  'POST /-/profile/personal_access_tokens/{token_id}/revoke': through('DELETE /api/v4/personal_access_tokens/{id}'),
  'POST /admin/users/{id}/impersonation_tokens': through('POST /api/v4/users/{id}/impersonation_tokens'),
  'POST /admin/users/{id}/impersonation_tokens/{token_id}/revoke': through('DELETE /api/v4/users/{id}/impersonation_tokens/{token_id}'),
  'POST /admin/applications': through('POST /api/v4/applications'),
  'POST /admin/applications/{id}/delete': through('DELETE /api/v4/applications/{id}'),
  'POST /-/profile/two_factor_auth': changes({ users: [twoFactorOn] }),
  // The same flag push as the app's (durable/user/two-factor.ts, afterAdding and pushFlag).
  'POST /-/profile/two_factor_auth/passkeys': changes({ users: [twoFactorOn] }),
  'POST /-/profile/two_factor_auth/passkeys/delete': changes({ users: [twoFactorOff] }),
  'POST /-/profile/two_factor_auth/disable': changes({ users: [twoFactorOff] }),
  'POST /-/profile/two_factor_auth/codes': none("recovery codes are kept only in the user's User object, which every second step asks"),
  'POST /-/profile/sign_out_everywhere': none("ends sessions; sessions are read from the user's User object on every page"),
  // ---- pages and the token service ----
  'POST /users/passkey_sign_in': none("starts a session (spends the page's challenge in the user's User object, which every passkey sign-in asks)"),
  'POST /users/two_factor': none("starts a session (uses a TOTP step, a recovery code or a passkey's challenge in the user's User object, which every second step asks)"),
  'POST /users/sign_in': none("starts a session; sessions are read from the user's User object on every page"),
  'POST /users/sign_out': none("ends a session; sessions are read from the user's User object on every page"),
  'POST /users/sign_up': through('POST /api/v4/users'),
  // The token service at Knock's paths and at GitLab's (one handler each).
  ...Object.fromEntries(
    [
      ['/login/oauth/authorize', '/oauth/authorize'],
      ['/login/oauth/introspect', '/oauth/introspect'],
      ['/login/oauth/access_token', '/oauth/token'],
      ['/login/oauth/revoke', '/oauth/revoke'],
      ['/login/oauth/userinfo', '/oauth/userinfo'],
    ].flatMap(([seed, gitlab]) => [seed, gitlab].map((path) => [`POST ${path}`, TOKEN_SERVICE[seed]])),
  ),
  'POST /api/v4/admin/signing_keys/rotate': changes({
    signingKeys: [['oidc-keys.test.ts', 'after a leak: the new key signs at once and every earlier key leaves the JWKS, so what it signed stops verifying']],
  }),
  // RFC 8628: the device authorization's owner is its DeviceAuthorizations partition, which no cache copies.
  'POST /login/oauth/authorize_device': none('records a new device authorization in its partition, read by every poll and by the verification page'),
  'POST /oauth/authorize_device': none('records a new device authorization in its partition, read by every poll and by the verification page'),
  'POST /oauth/device': none("records the user's decision in the device authorization's partition and a code in the grant authority, read by the next poll"),
  ...Object.fromEntries(
    ['/oauth/logout', '/login/oauth/logout'].map((path) => [
      `POST ${path}`,
      none("ends a session (sessions are read from the user's User object on every page) and queues back-channel logouts, which no cache holds"),
    ]),
  ),
  'POST /oauth/authorized_applications/revoke': changes({ tokens: [['oauth-flow.test.ts', 'shows the authorized applications and Revoke ends the grant, its tokens and the remembered consent']] }),
};

const MUTATING = ['POST', 'PUT', 'PATCH', 'DELETE'];

/** The routes that change something: /api/v4 from its OpenAPI document, the rest from the Worker's router. */
const mutatingRoutes = async (): Promise<string[]> => {
  const res = await call('/api/v4/openapi.json');
  expect(res.status).toBe(200);
  const doc = (await res.json()) as { paths: Record<string, Record<string, unknown>> };
  const api = Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.keys(item)
      .map((m) => m.toUpperCase())
      .filter((m) => MUTATING.includes(m))
      .map((m) => `${m} /api/v4${path}`),
  );
  const others = app.routes
    .filter((r) => MUTATING.includes(r.method) && !r.path.startsWith('/api/v4/'))
    .map((r) => `${r.method} ${r.path.replace(/:(\w+)(\{[^}]*\})?/g, '{$1}')}`);
  return [...new Set([...api, ...others])].sort();
};

const testSources = import.meta.glob<string>('./*.test.ts', { query: '?raw', import: 'default', eager: true });

/** A test's title as written: quoted whole, or a template literal that starts with it and adds its trial count. */
const isWritten = ([file, title]: Covered): boolean => {
  const source = testSources[`./${file}`];
  return source !== undefined && [`'${title}'`, `"${title}"`, `\`${title}\``, `\`${title} (\${`].some((quoted) => source.includes(quoted));
};

describe('every route that changes something names the caches it changes, or says it changes none', () => {
  it('maps every POST, PUT, PATCH and DELETE route', async () => {
    const live = await mutatingRoutes();
    expect(live.length).toBeGreaterThan(20);
    const unmapped = live.filter((r) => !(r in ROUTES));
    const message = [
      'These routes change something but test/worker/cache-guard.test.ts does not say what they do to the caches.',
      'Add each to ROUTES: changes({ <cache>: [[file, title of a test that changes it and reads it back through the cache]] }), or none(why):',
      ...unmapped.map((r) => `  ${r}`),
      'Caches:',
      ...Object.entries(CACHES).map(([name, what]) => `  ${name}: ${what}`),
    ].join('\n');
    expect(unmapped, message).toEqual([]);
  });

  it('maps no route that no longer exists', async () => {
    const live = new Set(await mutatingRoutes());
    expect(Object.keys(ROUTES).filter((r) => !live.has(r))).toEqual([]);
  });

  it('names invalidation tests that exist, a reason for every route that changes no cache, and the API route behind each console form', () => {
    const missing: string[] = [];
    for (const [route, effect] of Object.entries(ROUTES)) {
      if ('none' in effect) {
        expect(effect.none.length, route).toBeGreaterThan(5);
        continue;
      }
      if ('through' in effect) {
        const api = ROUTES[effect.through];
        expect(api !== undefined && !('through' in api), `${route} goes through ${effect.through}, which must be an /api/v4 route mapped here`).toBe(true);
        continue;
      }
      const named = Object.entries(effect.caches);
      expect(named.length, `${route} maps no cache: use none(why)`).toBeGreaterThan(0);
      for (const [cache, tests] of named) {
        expect(tests?.length, `${route} → ${cache}`).toBeGreaterThan(0);
        for (const covered of tests ?? []) if (!isWritten(covered)) missing.push(`${route} → ${cache}: ${covered[0]} › ${covered[1]}`);
      }
    }
    expect(missing, 'No test with this title in this file of test/worker').toEqual([]);
  });
});
