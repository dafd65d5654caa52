import type { Env } from '../../env';
import { accessTokenRecord, epochOf, putAccessToken, revokeAccessTokens } from '../../store/tokens';
import type { UserRow, UserSnapshot } from './types';
import { userObject } from '../user/user';
import type { LoginChange } from '../sign-in/sign-in';
import { indexPartition } from '../index-partition/index-partition';
import { namespaceObject } from '../namespace/types';
import { partitionName } from '../partitions';

/**
 * What a change to a user must reach besides the Directory's users row, and how. The Directory
 * works out a `FanOut` from its tables (after the change committed with an outbox row) and runs it
 * through `fanOut` before answering, and again from its alarm until one run completes. Every step
 * is idempotent and brings its copy to the snapshot it is given, so running it twice is harmless.
 */

/** A personal or impersonation token of the user that may still be live in KV. */
export interface LiveToken {
  id: number;
  token_hash: string;
  scopes: string[];
  created_at: string;
  /** Epoch seconds. */
  expires_at: number;
}

export interface FanOut {
  snapshot: UserSnapshot;
  /** What each `name:` partition concerned must be told: the login record, or that the name is gone from it. */
  logins: { partition: number; change: LoginChange }[];
  /** The user's personal and impersonation tokens (the Directory's `access_tokens`) still live. */
  tokens: LiveToken[];
  /** The password changed: the browser sessions begun before this version end. */
  endSessions: boolean;
}

export const isActive = (s: UserSnapshot): s is UserRow => s.state === 'active';

/**
 * Every copy of the user made to agree with `snapshot`:
 * - KV: an active user's live tokens carry the new profile; anyone
 *   else's are replaced by tombstones;
 * - the `name:` partition of the username has the login record (state, password hash), and those
 *   of names the user had before have it no more;
 * - the user's grant authority takes the new state (an inactive user's grants, codes and consents
 *   end there, their browser sessions are refused, and their access tokens become tombstones; a new
 *   password ends the sessions begun before it);
 * - groups and projects: pending requests follow a rename, or go when the user may no longer act;
 *   a deleted user's memberships go (their personal projects, and a new username's paths, reach
 *   the projects' objects through the registry's outbox, registry.ts).
 */
export const fanOut = async (env: Env, plan: FanOut): Promise<void> => {
  const user = plan.snapshot;
  await Promise.all([
    isActive(user) ? rewriteTokens(env, user, plan.tokens) : revokeAccessTokens(env, plan.tokens.map((t) => ({ hash: t.token_hash, expiresAt: t.expires_at }))),
    ...plan.logins.map((l) => env.SIGN_IN.getByName(partitionName('name', l.partition)).applyLogins([l.change])),
  ]);
  // The user's `User` takes the change and answers the index partitions holding rows of theirs,
  // in one step: a partition that becomes theirs later is told the change by `User` when it
  // registers, before the push that brought the user there answers.
  const partitions = await userObject(env, user.id).applyUser(user, plan.endSessions);
  // Those partitions take the new names or state first (a push racing this change is then told to
  // correct it), and say where the user has pending requests and memberships.
  const found = await Promise.all(partitions.map((p) => indexPartition(env, p).applyUser(user)));
  const pendingIn = found.flatMap((f) => f.pendingIn);
  const memberOf = user.state === 'deleted' ? found.flatMap((f) => f.memberOf) : [];
  if (isActive(user)) {
    await renameRequester(env, user, pendingIn);
    return;
  }
  await removePendingRequestsOf(env, user.id, pendingIn);
  await Promise.all(memberOf.map((id) => namespaceObject(env, id).removeDeletedUser(user.id)));
};

/** The profile inside each live token's KV record becomes the new one. */
const rewriteTokens = async (env: Env, user: UserRow, tokens: LiveToken[]): Promise<void> => {
  await Promise.all([
    ...tokens.map((t) =>
      putAccessToken(
        env,
        t.token_hash,
        accessTokenRecord(user, { scopes: t.scopes, clientId: null, grantId: null, tokenId: t.id, createdAt: epochOf(t.created_at), expiresAt: t.expires_at }),
      ),
    ),
  ]);
};

/**
 * A blocked, deactivated or deleted user's pending requests disappear from every owner's list,
 * wherever the requester index says they are. Each removal is queued for the index by the object.
 */
export const removePendingRequestsOf = async (env: Env, userId: number, where: number[]): Promise<number> => {
  const removed = await Promise.all(where.map((id) => namespaceObject(env, id).removePendingRequestOf(userId)));
  return removed.filter(Boolean).length;
};

/** The names stored with a user's pending requests follow a rename (newer versions only). */
const renameRequester = async (env: Env, user: UserRow, where: number[]): Promise<void> => {
  await Promise.all(where.map((id) => namespaceObject(env, id).renameRequester(user.id, { username: user.username, name: user.name }, user.version)));
};
