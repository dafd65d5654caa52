import type { AccessRequest, ApprovedAccessRequest, Member } from '../../../shared/api-types';
import type { UserRow } from '../../durable/directory/types';
import type { AccessRequestRow, MemberRow } from '../../durable/namespace/types';
import { presentUserBasic } from './user';

export { AccessRequestSchema, ApprovedAccessRequestSchema, MemberSchema } from '../../../shared/schemas';

type UserFields = Pick<UserRow, 'id' | 'username' | 'name' | 'state'>;
/** Who added or approved someone: named, without a state. */
type ActorFields = Pick<UserRow, 'id' | 'username' | 'name'>;
type MemberFields = Pick<MemberRow, 'access_level' | 'created_at' | 'expires_at'>;

const createdByOf = (u: ActorFields): NonNullable<Member['created_by']> => ({ id: u.id, username: u.username, name: u.name });

/** A pending request (GitLab's `AccessRequester`): the requester, and when they asked. */
export const presentAccessRequest = (r: Pick<AccessRequestRow, 'requested_at'>, u: UserFields, origin: string): AccessRequest => ({
  ...presentUserBasic(u, origin),
  created_at: r.requested_at,
  requested_at: r.requested_at,
});

/** A member, in GitLab's shape; `created_by` is who added them, when someone did. */
export const presentMember = (m: MemberFields, u: UserFields, createdBy: ActorFields | null, origin: string): Member => ({
  ...presentUserBasic(u, origin),
  access_level: m.access_level,
  created_at: m.created_at,
  expires_at: m.expires_at,
  ...(createdBy ? { created_by: createdByOf(createdBy) } : {}),
});

/** What approving answers: the new member and who approved them. */
export const presentApprovedMember = (m: MemberFields, u: UserFields, approver: ActorFields, origin: string): ApprovedAccessRequest => ({
  ...presentMember(m, u, null, origin),
  created_by: createdByOf(approver),
});
