/// <reference types="vite/client" />
import { describe, expect, it } from 'vitest';
import { call } from './support/http';

/**
 * Every write route of /api/v4, what it changes that something else keeps a copy of (the caches
 * and copies of docs/architecture.md#caches), and the tests that make that change and read it
 * back through the copy. A new write route fails this test until it is listed here, with its
 * invalidation test when it changes a copied thing.
 */
type Copy =
  | 'registry records and namespace objects'
  | 'applications'
  | 'token records in KV'
  | 'the user in the grant authority'
  | 'the root caller'
  | "requesters' names"
  | 'browser sessions'
  | 'the membership index'
  | 'the requester index'
  | "the owners' inbox";

interface Write {
  changes: Copy[];
  /** `file › test title`: tests that change it and read it back through each copy. */
  tests: string[];
}

/** Creating something new changes no copy: only existing things are copied. */
const NEW: Write = { changes: [], tests: [] };

/** The owners' inbox (and its ETag) reads every change to requests, members, sources and requesters. */
const inbox = (write: Write, test: string): Write => ({ changes: [...write.changes, "the owners' inbox"], tests: [...write.tests, `inbox.test.ts › ${test}`] });
const INBOX_REQUESTS = 'answers 304 to the current ETag with one Directory call and no group or project object, 200 with a new ETag after each change';
const INBOX_MEMBERS = 'shows a new Maintainer their project at once, and forgets a removed one';
const INBOX_SOURCES =
  'shows a renamed source by its new name and path, keeps requests when requests are turned off or visibility changes, and drops them when it is deleted';
const INBOX_REQUESTERS = 'drops the requests of a blocked, deactivated or deleted requester, with a new ETag';

const USER_CHANGE: Write = inbox({
  changes: ['token records in KV', 'the user in the grant authority', 'browser sessions', 'the requester index'],
  tests: [
    'user-lifecycle.test.ts › answers 201 true; every token, refresh token, code and session of the user ends at once; sign-in is refused with a reason',
    'oauth-caches.test.ts › gets no new tokens from a refresh from the moment the block answers',
    "user-lifecycle.test.ts › is finished by the Directory's alarm: tokens end, refreshes and codes are refused, the request is gone",
  ],
}, INBOX_REQUESTERS);

const WRITES: Record<string, Write> = {
  'POST /users': NEW,
  'PUT /users/{id}': inbox({
    changes: ['token records in KV', 'the user in the grant authority', 'the root caller', "requesters' names", 'registry records and namespace objects', 'browser sessions'],
    tests: [
      'user-lifecycle.test.ts › shows a rename through every copy: OAuth and personal tokens, pending requests, members lists, the browser session',
      'user-lifecycle.test.ts › shows a rename of root through the admin token at once, and root stays the built-in administrator',
      "user-lifecycle.test.ts › moves the user's personal namespace with the username: its projects answer at the new path, the old one is 404",
      'user-lifecycle.test.ts › changes username, name, email and the administrator flag; answers the user with private fields',
      'user-lifecycle.test.ts › a new password replaces the old one and ends the browser sessions',
      "inbox.test.ts › shows the new full path of a project in a renamed user’s personal namespace",
    ],
  }, 'shows a renamed requester by their new name, with a new ETag'),
  'POST /users/{id}/block': USER_CHANGE,
  'POST /users/{id}/deactivate': {
    ...USER_CHANGE,
    tests: ['user-lifecycle.test.ts › deactivating ends everything the user holds, as a block does; activating lets them sign in again', `inbox.test.ts › ${INBOX_REQUESTERS}`],
  },
  'POST /users/{id}/unblock': {
    changes: ['the user in the grant authority'],
    tests: ['user-lifecycle.test.ts › answers 201 true and lets the user sign in and get new tokens; the ended ones stay ended'],
  },
  'POST /users/{id}/activate': {
    changes: ['the user in the grant authority'],
    tests: ['user-lifecycle.test.ts › deactivating ends everything the user holds, as a block does; activating lets them sign in again'],
  },
  'DELETE /users/{id}': {
    changes: [...USER_CHANGE.changes, 'the membership index', 'registry records and namespace objects'],
    tests: ['user-lifecycle.test.ts › answers 204; the user, their tokens, session, memberships, pending requests and personal projects are gone', `inbox.test.ts › ${INBOX_REQUESTERS}`],
  },
  'POST /users/{id}/impersonation_tokens': NEW,
  'DELETE /users/{id}/impersonation_tokens/{token_id}': {
    changes: ['token records in KV'],
    tests: ['impersonation-tokens.test.ts › can be revoked, and then stop working at once'],
  },
  'POST /applications': NEW,
  'DELETE /applications/{id}': {
    changes: ['applications'],
    tests: ['oauth-caches.test.ts › cannot redeem a code through an isolate that still remembers the application'],
  },
  ...Object.fromEntries(
    ['groups', 'projects'].flatMap((kind): [string, Write][] => [
      [`POST /${kind}`, NEW],
      [
        `PUT /${kind}/{id}`,
        inbox(
          {
            changes: ['registry records and namespace objects'],
            tests: [
              "namespace-settings.test.ts › another isolate's cached path (an older version) is refused by the object and looked up again",
              'namespace-settings.test.ts › making it private hides it from outsiders at once',
            ],
          },
          INBOX_SOURCES,
        ),
      ],
      [
        `DELETE /${kind}/{id}`,
        inbox(
          {
            changes: ['registry records and namespace objects', 'the membership index', 'the requester index'],
            tests: ['namespace-settings.test.ts › deletes with members and pending requests (202); the id and path answer 404; the path is free'],
          },
          INBOX_SOURCES,
        ),
      ],
      [
        `POST /${kind}/{id}/access_requests`,
        inbox({ changes: ['the requester index'], tests: ['namespace-settings.test.ts › knows where a user waits; blocking the user empties every owner list'] }, INBOX_REQUESTS),
      ],
      [
        `PUT /${kind}/{id}/access_requests/{user_id}/approve`,
        inbox(
          {
            changes: ['the requester index', 'the membership index'],
            tests: [
              'namespace-settings.test.ts › follows approvals and withdrawals; renaming the user (PUT /users/:id) renames the stored names',
              'races.test.ts › removing a member while their request is approved: the later one decides',
            ],
          },
          INBOX_REQUESTS,
        ),
      ],
      [
        `DELETE /${kind}/{id}/access_requests/{user_id}`,
        inbox(
          { changes: ['the requester index'], tests: ['namespace-settings.test.ts › follows approvals and withdrawals; renaming the user (PUT /users/:id) renames the stored names'] },
          INBOX_REQUESTS,
        ),
      ],
      [
        `POST /${kind}/{id}/members`,
        inbox({ changes: ['the membership index', 'the requester index'], tests: ['members.test.ts › adding a requester removes their pending request in the same step'] }, INBOX_MEMBERS),
      ],
      [`PUT /${kind}/{id}/members/{user_id}`, inbox({ changes: ['the membership index'], tests: ['members.test.ts › edits level and expiry; the index follows; removal too'] }, INBOX_MEMBERS)],
      [`DELETE /${kind}/{id}/members/{user_id}`, inbox({ changes: ['the membership index'], tests: ['members.test.ts › edits level and expiry; the index follows; removal too'] }, INBOX_MEMBERS)],
    ]),
  ),
};

const testFiles = import.meta.glob<string>('./*.test.ts', { query: '?raw', import: 'default', eager: true });

const writeOperations = async (): Promise<string[]> => {
  const res = await call('/api/v4/openapi.json');
  expect(res.status).toBe(200);
  const doc = (await res.json()) as { paths: Record<string, Record<string, unknown>> };
  return Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.keys(item)
      .filter((m) => ['post', 'put', 'patch', 'delete'].includes(m))
      .map((m) => `${m.toUpperCase()} ${path}`),
  );
};

describe('every write route names the copies it changes and the tests that read them back', () => {
  it('lists exactly the write operations of /api/v4/openapi.json', async () => {
    const live = await writeOperations();
    const missing = live.filter((op) => !(op in WRITES)).sort();
    const extra = Object.keys(WRITES).filter((op) => !live.includes(op)).sort();
    expect(
      { missing, extra },
      'test/worker/cache-guard.test.ts: list each new write route in WRITES with what it changes (docs/architecture.md#caches) and the test that reads the change back',
    ).toEqual({ missing: [], extra: [] });
  });

  it('names, for every route that changes a copy, tests that exist', () => {
    for (const [op, write] of Object.entries(WRITES)) {
      if (write.changes.length > 0) expect(write.tests.length, `${op} changes ${write.changes.join(', ')} but names no test`).toBeGreaterThan(0);
      for (const test of write.tests) {
        const [file, title] = test.split(' › ');
        const source = testFiles[`./${file}`];
        expect(source, `${op}: no test file ${file}`).toBeDefined();
        expect(source.includes(title), `${op}: no test "${title}" in ${file}`).toBe(true);
      }
    }
  });
});
