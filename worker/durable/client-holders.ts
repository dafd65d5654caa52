import { DurableObject } from 'cloudflare:workers';
import type { Env } from '../env';
import { migrate } from './migrations';

/** The index's table. Append new migrations; never edit one that has shipped. */
const clientHoldersMigrations = [
  `CREATE TABLE holders (
     user_id INTEGER PRIMARY KEY
   );`,
];

/**
 * Which users hold (or may hold) grants for one application: one instance per client id, so
 * authorizations never queue on one shared object, and deleting the application can find every
 * user's grant authority to end what it gave. A user's grant authority registers itself here once
 * per application, before its first code for it.
 */
export class ClientHolders extends DurableObject<Env> {
  private readonly sql: SqlStorage;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.sql = ctx.storage.sql;
    migrate(ctx.storage, clientHoldersMigrations);
  }

  add(userId: number): void {
    this.sql.exec('INSERT INTO holders (user_id) VALUES (?) ON CONFLICT DO NOTHING', userId);
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

/** The holder index of one application. */
export const clientHoldersOf = (env: Env, clientId: string) => env.CLIENT_HOLDERS.getByName(clientId);
