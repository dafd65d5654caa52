// A membership lost while the partition is telling the same user of an earlier loss is told too
// (index-partition/claim-checks.ts): the real IndexPartition on node:sqlite, the users' `User`
// objects stood in for, so the test chooses when each of their answers arrives.
import { describe, expect, it } from 'vitest';
import { IndexPartition, type SourceCopy } from '../../worker/durable/index-partition/index-partition';
import type { Env } from '../../worker/env';
import { objectsInNode } from './support/durable-objects';
import { memberChange } from './support/index-changes';

/** A call that waits until the test lets it go. */
const held = () => {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  let reached!: () => void;
  const arrived = new Promise<void>((resolve) => (reached = resolve));
  return { gate, release, arrived, reach: () => reached() };
};

const group = (id: number): SourceCopy => ({ id, kind: 'group', name: `g${id}`, full_path: `g${id}`, visibility: 'public', version: 1, ancestorIds: [] });

describe('claim checks', () => {
  it('a loss applied while the user is being told of an earlier one is told after it: the earlier answer does not take it off the queue', async () => {
    const U = 7;
    const V = 8;
    const firstCheck = held();
    const registeringV = held();
    /** When each check of U's claims began, by the number of losses applied before it. */
    const checks: number[] = [];
    let lossesApplied = 0;
    const users = {
      getByName: (name: string) => ({
        addIndexPartitions: async () => {
          if (Number(name) === V && lossesApplied === 2) {
            registeringV.reach();
            await registeringV.gate;
          }
          return null;
        },
        checkGroupClaims: async () => {
          checks.push(lossesApplied);
          if (checks.length === 1) {
            firstCheck.reach();
            await firstCheck.gate;
          }
        },
      }),
    };
    const env = { DIRECTORY_PARTITIONS: '64' } as Record<string, unknown>;
    env.USERS = users;
    const partition = objectsInNode((ctx) => new IndexPartition(ctx, env as Env)).getByName('index:0');

    // U is a member of two groups of the partition.
    await partition.applyChanges(group(64), [memberChange(U, 30, 1)], [], []);
    await partition.applyChanges(group(128), [memberChange(U, 30, 1)], [], []);

    // U leaves the first group; the partition tells U's `User`, which takes its time to answer.
    lossesApplied = 1;
    const first = partition.applyChanges(group(64), [memberChange(U, 0, 2)], [], []);
    await firstCheck.arrived;
    // Meanwhile U leaves the second group too (with V joining it, whose registration waits).
    lossesApplied = 2;
    const second = partition.applyChanges(group(128), [memberChange(U, 0, 2), memberChange(V, 30, 1)], [], []);
    await registeringV.arrived;
    // The first answer arrives, then the second push goes on.
    firstCheck.release();
    await first;
    registeringV.release();
    await second;

    // A check of U began after the second loss was applied.
    expect(checks).toEqual([1, 2]);
  });
});
