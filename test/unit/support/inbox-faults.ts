import type { InboxAnswer, InboxUpdate } from '../../../worker/durable/user/inbox';
import type { User } from '../../../worker/durable/user/user';

/**
 * What can go wrong between an index partition and a manager's `User` (`takeInbox`), injected at
 * random into the inbox model (test/unit/inbox-model.test.ts):
 *
 * - `lost`: the update never arrives (the call fails);
 * - `unanswered`: it is taken, but the answer is lost (the partition sends it again);
 * - `late`: the call fails, and the update arrives later, after others (out of order, and twice
 *   once the partition has sent it again);
 * - `twice`: it arrives twice;
 * - `forgot`: the `User` lost the partition's share (its rows and the version it held), so a delta
 *   cannot follow it and it asks for the whole share. Its inbox's version then rises though what
 *   it shows may come back the same (`forgotten`);
 * - `crash`: the partition stops between committing its changes and sending them, and starts again
 *   with nothing of its memory (its outbox and alarm are in its storage).
 */
export const FAULTS = ['lost', 'unanswered', 'late', 'twice', 'forgot', 'crash'] as const;
export type Fault = (typeof FAULTS)[number];

/** How often each happens, per update sent. */
const ODDS: Record<Fault, number> = { lost: 0.06, unanswered: 0.05, late: 0.05, twice: 0.04, forgot: 0.03, crash: 0.03 };

/** A small seeded generator (mulberry32), so a failing sequence replays. */
const generator = (seed: number) => {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
};

export class InboxFaults {
  /** Faults injected, and the `User`s' answers asking for a whole share. */
  readonly counts: Record<Fault | 'resync', number> = { lost: 0, unanswered: 0, late: 0, twice: 0, forgot: 0, crash: 0, resync: 0 };
  /** Off: every update arrives once, in order (what the partitions' alarms eventually achieve). */
  enabled = true;
  /** Whether a `User` lost a share since the model last cleared it. */
  forgotten = false;
  private readonly random: () => number;
  private late: (() => void)[] = [];

  constructor(
    seed: number,
    private readonly restartPartition: (partition: number) => void,
  ) {
    this.random = generator(seed);
  }

  /** A `USERS` binding whose objects take updates through the faults; every other method as it is. */
  wrap(binding: { getByName(name: string): User }): { getByName(name: string): User } {
    return {
      getByName: (name: string) => {
        const user = binding.getByName(name);
        return new Proxy(user, {
          get: (target, property) => {
            if (property === 'takeInbox') return (partition: number, update: InboxUpdate) => this.takeInbox(target, partition, update);
            const value = Reflect.get(target, property) as unknown;
            return typeof value === 'function' ? value.bind(target) : value;
          },
        });
      },
    };
  }

  /** Updates that were late arrive now (they must change nothing the partitions have not sent since). */
  arriveLate(): void {
    const late = this.late;
    this.late = [];
    for (const arrive of late) arrive();
  }

  private pick(): Fault | null {
    if (!this.enabled) return null;
    let r = this.random();
    for (const fault of FAULTS) {
      if (r < ODDS[fault]) return fault;
      r -= ODDS[fault];
    }
    return null;
  }

  private async takeInbox(user: User, partition: number, update: InboxUpdate): Promise<InboxAnswer> {
    // Now and then an update that was late arrives before this one.
    if (this.late.length > 0 && this.random() < 0.3) this.late.shift()!();
    const take = () => {
      const answer = user.takeInbox(partition, update);
      if (answer === 'resync') this.counts.resync++;
      return answer;
    };
    const fault = this.pick();
    if (fault) this.counts[fault]++;
    switch (fault) {
      case 'lost':
        throw new Error('the update was lost');
      case 'unanswered':
        take();
        throw new Error("the update's answer was lost");
      case 'late':
        this.late.push(() => void take());
        throw new Error('the update is late');
      case 'twice': {
        const answer = take();
        take();
        return answer;
      }
      case 'forgot': {
        // What it showed is gone, so its version moves (a reader holding the last one must not be told nothing changed).
        const { sql } = user['ctx'].storage;
        sql.exec('DELETE FROM inbox WHERE partition = ?', partition);
        sql.exec('DELETE FROM inbox_shares WHERE partition = ?', partition);
        sql.exec('UPDATE inbox_version SET version = version + 1');
        this.forgotten = true;
        return take();
      }
      case 'crash':
        this.restartPartition(partition);
        throw new Error('the partition stopped before sending');
      case null:
        return take();
    }
  }
}
