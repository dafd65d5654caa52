import { DurableObject } from 'cloudflare:workers';
import type { Env } from '../../env';
import { clock } from '../../clock';
import { directory } from '../directory/directory';
import type { ApplicationRow } from '../directory/types';
import { userObject } from '../user/user';
import { migrate } from '../migrations';
import { BackchannelLogouts, type LogoutAttempt, type LogoutNotice } from './backchannel';
import { CLIENT_HOLDERS_SCHEMA } from './schema';
import { plainRows } from '../plain-rows';

/** How soon a deletion's unfinished ending of grants is tried again (after a crash or an unreachable holder). */
const END_RETRY_MS = 30_000;

/**
 * One application, by its client id: its registration as the Directory holds it (copied on the
 * first lookup), and which users hold (or may hold) grants for it. One instance per client id, so
 * authorizations and code exchanges never queue on one shared object, and deleting the application
 * can find every user's grant authority to end what it gave. A user's grant authority registers
 * itself here once per application, before its first code for it.
 */
export class ClientHolders extends DurableObject<Env> {
  private readonly sql: SqlStorage;
  private readonly logouts: BackchannelLogouts;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.sql = plainRows(ctx.storage.sql);
    migrate(ctx.storage, CLIENT_HOLDERS_SCHEMA);
    this.logouts = new BackchannelLogouts(ctx.storage, env);
  }

  /**
   * The registered application, or null when there is none or it was deleted. Copied from the
   * Directory on the first lookup; a deletion marks it here before the Directory's row goes
   * (`forgetApplication`), and a copy read while that happened is not kept.
   */
  async application(clientId: string): Promise<ApplicationRow | null> {
    const stored = this.storedApplication();
    if (stored !== undefined) return stored;
    const found = await directory(this.env).getApplicationByClientId(clientId);
    if (found) this.sql.exec('INSERT INTO application (singleton, row) VALUES (1, ?) ON CONFLICT DO NOTHING', JSON.stringify(found));
    return this.storedApplication() ?? null;
  }

  /**
   * The application is being deleted: from now on this client id names nothing, no new holder is
   * listed, and the grants of those listed are ended (`endGrants`, which the deletion calls before
   * it answers; the alarm set here, in the same turn as the mark, finishes it after a crash).
   */
  async forgetApplication(clientId: string): Promise<void> {
    this.sql.exec(
      'INSERT INTO application (singleton, row, deleted, ending) VALUES (1, NULL, 1, ?) ON CONFLICT (singleton) DO UPDATE SET row = NULL, deleted = 1, ending = excluded.ending',
      clientId,
    );
    await this.ctx.storage.setAlarm(clock.now() + END_RETRY_MS);
  }

  /**
   * Ends, in each holder's grant authority, every grant, token and pending code given to the
   * deleted application (and records the deletion there, so none is issued again), then forgets
   * the holders. Idempotent; done when no holder is left.
   */
  async endGrants(): Promise<void> {
    const clientId = this.ending();
    if (clientId === null) return;
    const holders = this.list();
    await Promise.all(holders.map((userId) => userObject(this.env, userId).revokeClient(clientId, true)));
    this.remove(holders);
    // add() lists no one once the application is deleted, so the list can only have shrunk.
    if (this.list().length === 0) {
      this.sql.exec('UPDATE application SET ending = NULL');
      await this.scheduleAlarm();
    }
  }

  async alarm(): Promise<void> {
    try {
      await this.endGrants();
    } catch (e) {
      console.warn('ending the grants of a deleted application failed; the alarm will retry', e);
    }
    try {
      const app = await this.application(this.ctx.id.name ?? '');
      await this.logouts.run(app?.backchannel_logout_uri ? { clientId: app.client_id, uri: app.backchannel_logout_uri } : null);
    } finally {
      await this.scheduleAlarm();
    }
  }

  /** The alarm rings for the next of: a deletion's ending of grants still to finish, the next logout delivery. */
  private async scheduleAlarm(): Promise<void> {
    const ending = this.ending() !== null ? clock.now() + END_RETRY_MS : null;
    const due = [ending, this.logouts.nextDue()].filter((t): t is number => t !== null);
    if (due.length === 0) await this.ctx.storage.deleteAlarm();
    else await this.ctx.storage.setAlarm(Math.min(...due));
  }

  // ---- back-channel logout (backchannel.ts) ----

  /**
   * Logouts a user's `User` object hands over (OpenID Connect Back-Channel Logout 1.0): queued in
   * one transaction with the alarm set in the same turn, so the alarm delivers them, never the
   * request that ended the access.
   */
  async queueLogouts(notices: LogoutNotice[]): Promise<void> {
    this.ctx.storage.transactionSync(() => this.logouts.queue(notices));
    await this.scheduleAlarm();
  }

  /** The delivery log of the last seven days, newest first. */
  logoutLog(offset: number, limit: number): { total: number; items: LogoutAttempt[] } {
    return this.logouts.log(offset, limit);
  }

  private ending(): string | null {
    return this.sql.exec<{ ending: string | null }>('SELECT ending FROM application').toArray()[0]?.ending ?? null;
  }

  /** The stored copy: the row, null when deleted, undefined when never copied. */
  private storedApplication(): ApplicationRow | null | undefined {
    const row = this.sql.exec<{ row: string | null; deleted: number }>('SELECT row, deleted FROM application').toArray()[0];
    if (!row) return undefined;
    return row.deleted || row.row === null ? null : (JSON.parse(row.row) as ApplicationRow);
  }

  /**
   * Lists the user as a holder, before their first code for the application; false (and nothing
   * listed) once the application is deleted, so a code is never issued for it after its holders
   * were listed for ending.
   */
  add(userId: number): boolean {
    if (this.sql.exec('SELECT 1 FROM application WHERE deleted = 1').toArray().length > 0) return false;
    this.sql.exec('INSERT INTO holders (user_id) VALUES (?) ON CONFLICT DO NOTHING', userId);
    return true;
  }

  list(): number[] {
    return this.sql.exec<{ user_id: number }>('SELECT user_id FROM holders ORDER BY user_id').toArray().map((r) => r.user_id);
  }

  /** Forgets these holders (their grants for the application have ended); others stay listed. */
  remove(userIds: number[]): void {
    this.ctx.storage.transactionSync(() => {
      for (const userId of userIds) this.sql.exec('DELETE FROM holders WHERE user_id = ?', userId);
    });
  }
}

/** The object of one application: its registration and its holders. */
export const clientHoldersOf = (env: Env, clientId: string) => env.CLIENT_HOLDERS.getByName(clientId);
