import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MEMBER_ACTIONS, REQUEST_ACTIONS, SETTINGS_ACTIONS, triggerOf } from '../../worker/events/event';

// Each hook setting governs exactly the events docs/webhooks.md lists under it ("sent to hooks
// with"): GitLab's member events fire when a user is added, changed or removed ("Group member
// events", https://docs.gitlab.com/user/project/integrations/webhook_events/), so an approval,
// which adds a member, is a member event and not an access request event.

/** `action` → `sent to hooks with`, from the events table of docs/webhooks.md. */
const documented = (): Map<string, string> => {
  const text = readFileSync(join(import.meta.dirname, '..', '..', 'docs', 'webhooks.md'), 'utf8');
  const table = text.slice(text.indexOf('| event | `event_name` (group)'));
  const rows = table.slice(0, table.indexOf('\n\n')).split('\n').slice(2);
  return new Map(
    rows.map((row) => {
      const cells = row.split('|').map((c) => c.trim().replace(/`/g, ''));
      return [cells[4], cells[5]];
    }),
  );
};

describe('which hook setting an event goes to', () => {
  it('is the one docs/webhooks.md lists for it, for every member and access request event', () => {
    const table = documented();
    expect([...table.keys()].sort()).toEqual([...MEMBER_ACTIONS, ...REQUEST_ACTIONS].sort());
    for (const [action, setting] of table) expect(triggerOf(action as (typeof MEMBER_ACTIONS)[number]), action).toBe(setting);
  });

  it('is none for settings and hook changes (the audit log only)', () => {
    for (const action of SETTINGS_ACTIONS) expect(triggerOf(action)).toBeNull();
  });
});
