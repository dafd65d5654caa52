import { clock } from '../../clock';
import { problems } from '../../errors';
import { partitionCount, partitionOfName } from '../partitions';
import { fail, ok, type Result } from '../result';
import type { LoginChange } from '../sign-in/sign-in';
import { DirectoryTokens } from './tokens';
import type { UserSnapshot } from './types';
import { fanOut, isActive, type FanOut } from './user-fanout';

/** How long before an unfinished fan-out of a user change is retried by the alarm. */
export const FAN_OUT_RETRY_MS = 10_000;

/**
 * The queue of user changes still to be fanned out (`user_changes`): each change of a users row
 * queues its fan-out in the same transaction, which runs (user-fanout.ts) before the change
 * answers, and again from the alarm until one run completes.
 */
export abstract class DirectoryFanOut extends DirectoryTokens {
  /** Runs the fan-outs still waiting; true while some are left. */
  protected async retryFanOuts(): Promise<boolean> {
    const waiting = this.sql.exec<{ user_id: number }>('SELECT user_id FROM user_changes').toArray();
    const results = await Promise.allSettled(waiting.map((w) => this.propagate(w.user_id)));
    for (const r of results) if (r.status === 'rejected') console.warn('user fan-out failed; the alarm will retry', r.reason);
    return this.sql.exec('SELECT 1 FROM user_changes LIMIT 1').toArray().length > 0;
  }

  /**
   * Records that user `id` changed (version `version`) and must be fanned out. Called inside the
   * transaction that changes the row; the alarm is set in the same synchronous turn, so it is
   * stored with the change (Durable Object writes without an intervening await commit together).
   */
  protected queueFanOut(id: number, version: number, endSessions = false, formerNames: string[] = []): void {
    this.sql.exec(
      `INSERT INTO user_changes (user_id, version, end_sessions, former_names) VALUES (?, ?, ?, ?)
       ON CONFLICT (user_id) DO UPDATE SET version = excluded.version,
         end_sessions = MAX(user_changes.end_sessions, excluded.end_sessions),
         former_names = (SELECT json_group_array(value) FROM (
           SELECT value FROM json_each(user_changes.former_names) UNION SELECT value FROM json_each(excluded.former_names)))`,
      id,
      version,
      Number(endSessions),
      JSON.stringify(formerNames),
    );
    void this.ctx.storage.setAlarm(clock.now() + FAN_OUT_RETRY_MS);
  }

  /** Runs the fan-out now; when it fails, the change stands and the alarm finishes it (503 meanwhile). */
  protected async settleFanOut(id: number): Promise<Result<null>> {
    try {
      await this.propagate(id);
      return ok(null);
    } catch (e) {
      console.warn('user fan-out failed; the alarm will retry', id, e);
      return fail(problems.unavailable('The change is saved; bringing the user\'s sign-in, sessions and tokens up to date is being retried'));
    }
  }

  /**
   * Brings every copy of user `id` up to its row, until no change is waiting. One run at a time per
   * user (see `serial`), each from what the tables say when it starts, so the last run is the newest.
   */
  private propagate(id: number): Promise<void> {
    return this.serial(id, async () => {
      for (;;) {
        const change = this.sql
          .exec<{ version: number; end_sessions: number; former_names: string }>('SELECT version, end_sessions, former_names FROM user_changes WHERE user_id = ?', id)
          .toArray()[0];
        if (!change) return;
        const plan = this.fanOutPlan(id, change.end_sessions === 1, JSON.parse(change.former_names) as string[]);
        await fanOut(this.env, plan);
        this.ctx.storage.transactionSync(() => {
          if (!isActive(plan.snapshot)) this.markRevoked(plan.tokens);
          this.sql.exec('DELETE FROM user_changes WHERE user_id = ? AND version = ?', id, change.version);
        });
      }
    });
  }

  /** What the fan-out of user `id` must reach, read from the tables as they are now. */
  private fanOutPlan(id: number, endSessions: boolean, formerNames: string[]): FanOut {
    const snapshot = this.userSnapshot(id);
    return { snapshot, logins: this.loginChanges(snapshot, formerNames), tokens: this.liveTokensOf(id), endSessions };
  }

  /**
   * What the `name:` partitions must be told: the partition of the username gets the login record
   * (unless the user was deleted); the partition of each name the user had before (renamed or
   * deleted since the last fan-out finished) that is not the same one, that the name is gone.
   */
  private loginChanges(snapshot: UserSnapshot, formerNames: string[]): FanOut['logins'] {
    const count = partitionCount(this.env);
    const login = snapshot.state === 'deleted' ? null : this.loginOf(snapshot.username);
    const current = login ? partitionOfName(login.user.username, count) : null;
    const changes = new Map<number, LoginChange>();
    if (current !== null) changes.set(current, { userId: snapshot.id, version: snapshot.version, login });
    for (const name of formerNames) {
      const p = partitionOfName(name, count);
      if (!changes.has(p)) changes.set(p, { userId: snapshot.id, version: snapshot.version, login: null });
    }
    return [...changes].map(([partition, change]) => ({ partition, change }));
  }
}
