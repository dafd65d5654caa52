import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { eventId, namespaceOfEvent } from '../../worker/events/event';

// An audit event has one id everywhere (GitLab's audit events API), given by its group's or project's object.
describe('eventId', () => {
  const below = 94_000_000;

  it('names its group or project again, and is a safe integer, for both numbers below 94 million', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: below }), fc.integer({ min: 1, max: below }), (namespaceId, n) => {
        const id = eventId(namespaceId, n);
        expect(Number.isSafeInteger(id)).toBe(true);
        expect(namespaceOfEvent(id)).toBe(namespaceId);
      }),
    );
  });

  it('grows with the event number within one group or project', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: below }), fc.integer({ min: 1, max: below - 1 }), (namespaceId, n) => {
        expect(eventId(namespaceId, n + 1)).toBeGreaterThan(eventId(namespaceId, n));
      }),
    );
  });

  it('is unique', () => {
    // One assertion over the 90,000 pairs (an `expect` per pair took seconds on a loaded machine).
    const seen = new Map<number, string>();
    const clashes: string[] = [];
    for (let ns = 1; ns <= 300; ns++) {
      for (let n = 1; n <= 300; n++) {
        const id = eventId(ns, n);
        const earlier = seen.get(id);
        if (earlier !== undefined) clashes.push(`${earlier} and ${ns}, ${n}`);
        seen.set(id, `${ns}, ${n}`);
      }
    }
    expect(clashes).toEqual([]);
  });
});
