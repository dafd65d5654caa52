// The signed-in user's own access requests on a server, as Knock's `GET /user/access_requests`
// lists them: those pending, and how the others ended in the last 30 days.

import { accessLevelName } from '../../shared/access-levels';
import type { OwnAccessRequest } from '../../shared/api-types';
import type { ServerUrl } from './stored-values';

/** `group` or `project`, as the extension names a source. */
export const ownKind = (request: OwnAccessRequest) => (request.source_type === 'Namespace' ? 'group' : 'project');

/**
 * One request on one server (`https://knock.example project:7:<requested_at>`): asking again after
 * an outcome starts a new one, with a new `requested_at`.
 */
export const ownRequestKey = (serverUrl: ServerUrl, request: OwnAccessRequest) =>
  `${serverUrl} ${ownKind(request)}:${request.source_id}:${request.requested_at}`;

/** What became of it, in words: `Approved as Developer until 2027-01-31`, `Denied: not now`, `Pending`. */
export function outcomeText(request: OwnAccessRequest): string {
  const level = request.access_level === null ? '' : ` as ${accessLevelName(request.access_level)}`;
  const until = request.expires_at ? ` until ${endText(request.expires_at)}` : '';
  const words: Record<OwnAccessRequest['status'], string> = {
    pending: 'Pending',
    approved: `Approved${level}${until}`,
    denied: request.denial_reason ? `Denied: ${request.denial_reason}` : 'Denied',
    withdrawn: 'Withdrawn',
    lapsed: 'Expired unanswered',
    expired: `Expired${request.expires_at ? ` on ${endText(request.expires_at)}` : ''}`,
  };
  return words[request.status];
}

/** An end as people read it: a date as it is, a date-time in UTC to the minute (`2026-11-27 02:00 UTC`). */
export const endText = (end: string): string => (end.length > 10 ? `${end.slice(0, 16).replace('T', ' ')} UTC` : end);
