import type { NamespaceRow } from '../namespace-registry';
import { newEvent, type EventDraft, type UserRef } from '../../events/event';

/** The settings `PUT /groups/:id` and `PUT /projects/:id` change, as the audit log names them. */
const ATTRIBUTES = ['name', 'path', 'description', 'visibility', 'request_access_enabled', 'require_two_factor_authentication'] as const;

/**
 * One `settings_changed` event per attribute that changed (GitLab records a change per
 * attribute: `change`, `from`, `to`), describing the group or project as it is after the change.
 */
export const settingsEvents = (before: NamespaceRow, after: NamespaceRow, author: UserRef): EventDraft[] => {
  if (after.kind === 'user') return [];
  const entity = { id: after.id, kind: after.kind, full_path: after.full_path, name: after.name, visibility: after.visibility };
  return ATTRIBUTES.filter((a) => before[a] !== after[a]).map((attribute) =>
    newEvent(entity, { action: 'settings_changed', author, change: { attribute, from: before[attribute], to: after[attribute] } }),
  );
};
