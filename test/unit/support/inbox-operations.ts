import fc from 'fast-check';

/**
 * The random operations of the inbox model, run in Node against the index partitions'
 * code (test/unit/inbox-model.test.ts, thousands of them) and over HTTP against the whole Worker
 * (test/worker/inbox-model.test.ts, a hundred, so the wiring stays proven): one vocabulary, one
 * layout, so both runs draw the same sequences from the same seed.
 */

export type Route = 'groups' | 'projects';
export const SOURCES = ['top', 'sub', 'app', 'lib', 'other', 'solo'] as const;
export type SourceName = (typeof SOURCES)[number];
export const USERS = ['ownerA', 'ownerB', 'm1', 'm2', 'r1', 'r2', 'r3', 'r4'] as const;
export type UserName = (typeof USERS)[number];
export const REQUESTERS = ['r1', 'r2', 'r3', 'r4', 'm1', 'm2'] as const;
/** Whose inbox is read after every operation (the administrator reads every request). */
export const WATCHED = ['ownerA', 'ownerB', 'm1', 'm2', 'r1', 'admin'] as const;
export type Watched = (typeof WATCHED)[number];
export type Actor = UserName | 'admin';

/** ownerA: top (group) ⊃ sub (group) ⊃ lib (project), top ⊃ app (project); ownerB: other (group), solo (personal project). */
export const LAYOUT: Record<SourceName, { route: Route; owner: 'ownerA' | 'ownerB'; parent: SourceName | null }> = {
  top: { route: 'groups', owner: 'ownerA', parent: null },
  sub: { route: 'groups', owner: 'ownerA', parent: 'top' },
  app: { route: 'projects', owner: 'ownerA', parent: 'top' },
  lib: { route: 'projects', owner: 'ownerA', parent: 'sub' },
  other: { route: 'groups', owner: 'ownerB', parent: null },
  solo: { route: 'projects', owner: 'ownerB', parent: null },
};

/** Deleted before their parents when a sequence ends. */
export const LEAVES_FIRST = ['lib', 'app', 'solo', 'sub', 'top', 'other'] as const;

const MANAGER = fc.oneof(
  { arbitrary: fc.constantFrom<Actor>('ownerA', 'ownerB', 'admin'), weight: 4 },
  { arbitrary: fc.constantFrom<Actor>(...USERS), weight: 2 },
);
const SOURCE = fc.constantFrom(...SOURCES);
const LEVEL = fc.constantFrom(10, 20, 30, 40, 40, 50, 50);
/** Days from now, or no expiry. */
const EXPIRY = fc.option(fc.integer({ min: 1, max: 3 }), { freq: 3 });

export type Op =
  | { op: 'request'; who: UserName; source: SourceName }
  | { op: 'approve'; actor: Actor; who: UserName; source: SourceName; level: number; expiresIn: number | null }
  | { op: 'deny'; actor: Actor; who: UserName; source: SourceName }
  | { op: 'withdraw'; who: UserName; source: SourceName }
  | { op: 'add'; actor: Actor; who: UserName; source: SourceName; level: number; expiresIn: number | null }
  | { op: 'update'; actor: Actor; who: UserName; source: SourceName; level: number }
  | { op: 'remove'; actor: Actor; who: UserName; source: SourceName }
  | { op: 'rename'; actor: Actor; source: SourceName }
  | { op: 'settings'; actor: Actor; source: SourceName; requests: boolean | null; visibility: 'private' | 'internal' | 'public' | null }
  | { op: 'delete'; actor: Actor; source: SourceName }
  | { op: 'block'; who: UserName }
  | { op: 'day' };

export const opArbitrary: fc.Arbitrary<Op> = fc.oneof(
  { arbitrary: fc.record({ op: fc.constant('request' as const), who: fc.constantFrom<UserName>(...REQUESTERS), source: SOURCE }), weight: 8 },
  {
    arbitrary: fc.record({ op: fc.constant('approve' as const), actor: MANAGER, who: fc.constantFrom<UserName>(...REQUESTERS), source: SOURCE, level: LEVEL, expiresIn: EXPIRY }),
    weight: 4,
  },
  { arbitrary: fc.record({ op: fc.constant('deny' as const), actor: MANAGER, who: fc.constantFrom<UserName>(...REQUESTERS), source: SOURCE }), weight: 2 },
  { arbitrary: fc.record({ op: fc.constant('withdraw' as const), who: fc.constantFrom<UserName>(...REQUESTERS), source: SOURCE }), weight: 2 },
  {
    arbitrary: fc.record({ op: fc.constant('add' as const), actor: MANAGER, who: fc.constantFrom<UserName>(...USERS), source: SOURCE, level: LEVEL, expiresIn: EXPIRY }),
    weight: 3,
  },
  { arbitrary: fc.record({ op: fc.constant('update' as const), actor: MANAGER, who: fc.constantFrom<UserName>(...USERS), source: SOURCE, level: LEVEL }), weight: 2 },
  { arbitrary: fc.record({ op: fc.constant('remove' as const), actor: MANAGER, who: fc.constantFrom<UserName>(...USERS), source: SOURCE }), weight: 2 },
  { arbitrary: fc.record({ op: fc.constant('rename' as const), actor: MANAGER, source: SOURCE }), weight: 1 },
  {
    arbitrary: fc.record({
      op: fc.constant('settings' as const),
      actor: MANAGER,
      source: SOURCE,
      requests: fc.option(fc.boolean()),
      visibility: fc.option(fc.constantFrom('private' as const, 'internal' as const, 'public' as const)),
    }),
    weight: 1,
  },
  { arbitrary: fc.record({ op: fc.constant('delete' as const), actor: MANAGER, source: fc.constantFrom<SourceName>('app', 'lib', 'solo') }), weight: 1 },
  { arbitrary: fc.record({ op: fc.constant('block' as const), who: fc.constantFrom<UserName>(...REQUESTERS) }), weight: 1 },
  { arbitrary: fc.constant({ op: 'day' as const }), weight: 1 },
);

export const OPS_PER_RUN = 100;
/** The clock moves at most this many days in a sequence (tokens and memberships outlive it). */
export const MAX_DAYS = 4;

/** What a requester was told about their request to one source (from the operations' answers). */
export type Outcome = { status: 'pending' | 'denied' | 'withdrawn' | 'removed' } | { status: 'approved'; level: number; expiresAt: string | null };

/**
 * A requester's own request as the model expects it: `[source_type, source_id, status, access_level,
 * expires_at]`, from what the operations answered (an approval past its expiry date reads `expired`).
 */
export const expectedOwnRequest = (route: Route, sourceId: number, o: Exclude<Outcome, { status: 'removed' }>, today: string): string => {
  const status = o.status === 'approved' && o.expiresAt !== null && o.expiresAt <= today ? 'expired' : o.status;
  const granted = o.status === 'approved' ? [o.level, o.expiresAt] : [null, null];
  return JSON.stringify([route === 'groups' ? 'Namespace' : 'Project', sourceId, status, ...granted]);
};

/** A requester's own request as the API shows it, comparable with `expectedOwnRequest`. */
export const shownOwnRequest = (o: { source_type: string; source_id: number; status: string; access_level: number | null; expires_at: string | null }): string =>
  JSON.stringify([o.source_type, o.source_id, o.status, o.access_level, o.expires_at]);

/** An inbox item as a comparable line: its source, requester and the highest level the reader may grant. */
export const inboxLine = (i: { source_type: string; source_id: number; id: number; source_full_path: string; source_name: string; username: string; max_access_level: number }) =>
  `${i.source_type}:${i.source_id}:${i.id} ${i.source_full_path} "${i.source_name}" ${i.username} max=${i.max_access_level}`;
