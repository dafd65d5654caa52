import { env } from 'cloudflare:workers';
import { beforeAll, describe, expect, it } from 'vitest';
import { auditLogPartOf } from '../../worker/durable/audit-log/audit-log';
import { admin, as, createProject, person, startWorker } from './support/namespaces';
import { settle } from './support/receiver';

/**
 * The instance audit log (`GET /audit_events`) is kept in parts, each group's or project's events in
 * the part of its id, and read merged: newest first, paginated as one log.
 */

interface AuditEvent {
  id: number;
  entity_id: number;
  event_name: string;
  created_at: string;
  details: { event_id?: string };
}

const instanceLog = async (query: string): Promise<{ events: AuditEvent[]; total: number }> => {
  const res = await admin.get(`/audit_events?${query}`);
  expect(res.status, await res.clone().text()).toBe(200);
  return { events: (await res.json()) as AuditEvent[], total: Number(res.headers.get('X-Total')) };
};

beforeAll(startWorker, 30_000);

describe('the instance audit log in parts', () => {
  it('keeps each project in the part of its id and merges them newest first, page by page', async () => {
    // This test's events (the runtime may hold other files' events too).
    const mine = `created_after=${encodeURIComponent(new Date(Date.now() - 1).toISOString())}`;
    const owner = await person('own');
    // Three projects of one owner (one tree, so ids in one index partition) in three parts: the
    // first three of a dozen whose parts differ (a dozen ids spread by hash over 16 parts reach
    // three parts but for odds below one in a million).
    const made = await Promise.all(Array.from({ length: 12 }, () => createProject(owner)));
    const projects = made.filter((p, i) => made.findIndex((q) => auditLogPartOf(q.id) === auditLogPartOf(p.id)) === i).slice(0, 3);
    expect(new Set(projects.map((p) => auditLogPartOf(p.id))).size).toBe(3);
    const requesters = await Promise.all(projects.map(() => person('req')));
    for (const [i, p] of projects.entries()) expect((await as(requesters[i]).post(`/projects/${p.id}/access_requests`)).status).toBe(201);
    await settle(...projects.map((p) => p.id));

    for (const p of projects) {
      const stored = await env.AUDIT_LOG.getByName(`instance:${auditLogPartOf(p.id)}`).listEvents({ entityType: 'project', entityId: p.id }, 10);
      expect(stored.items.map((e) => e.record.action)).toEqual(['requested', 'added']);
    }

    const whole = await instanceLog(`${mine}&per_page=100`);
    const ours = whole.events.filter((e) => projects.some((p) => p.id === e.entity_id));
    expect(ours.map((e) => `${e.entity_id} ${e.event_name}`).sort()).toEqual(
      projects.flatMap((p) => [`${p.id} access_request_created`, `${p.id} member_created`]).sort(),
    );
    expect(whole.events.map((e) => e.created_at)).toEqual([...whole.events.map((e) => e.created_at)].sort().reverse());
    expect(new Set(whole.events.map((e) => e.id)).size).toBe(whole.events.length);
    expect(whole.total).toBe(whole.events.length);

    // Page by page, the same events in the same order.
    const paged: AuditEvent[] = [];
    for (let page = 1; paged.length < whole.events.length; page++) {
      const { events } = await instanceLog(`${mine}&per_page=2&page=${page}`);
      expect(events.length).toBeGreaterThan(0);
      paged.push(...events);
    }
    expect(paged.map((e) => e.id)).toEqual(whole.events.map((e) => e.id));

    // Each one is found again by its id, whatever part keeps it.
    for (const e of ours) {
      const one = await admin.get(`/audit_events/${e.id}`);
      expect(one.status).toBe(200);
      expect(await one.json()).toEqual(e);
    }
  });
});
