import { DurableObject } from 'cloudflare:workers';
import { open, seal } from '../../auth/secret-box';
import { clock, epochSeconds } from '../../clock';
import type { Env } from '../../env';
import { problems } from '../../errors';
import { DEVICE_FLOW } from '../../protocol/device-codes';
import { migrate } from '../migrations';
import { partitionCount, partitionName, partitionOfName } from '../partitions';
import { fail, ok, type Result } from '../result';
import { DEVICE_AUTHORIZATIONS_SCHEMA } from './schema';
import { plainRows } from '../plain-rows';

/** An expired authorization is kept this long, so a late poll hears `expired_token` rather than `invalid_grant`. */
const KEPT_AFTER_EXPIRY_SECONDS = 3600;

interface NewDeviceAuthorization {
  deviceHash: string;
  userCodeHash: string;
  clientId: string;
  scopes: string[];
  /** Epoch seconds. */
  expiresAt: number;
}

/** What the verification page shows of an authorization still waiting for its user. */
interface PendingDeviceAuthorization {
  clientId: string;
  scopes: string[];
}

/** The user's answer: approve with the authorization code their `User` object issued for it, or deny. */
type DeviceDecision = { approve: { userId: number; code: string } } | { deny: true };

/** What a poll that won the approval takes to the user's `User` object. */
interface ApprovedDevice {
  userId: number;
  code: string;
}

type Row = {
  device_hash: string;
  client_id: string;
  scopes: string;
  expires_at: number;
  interval: number;
  polled_at: number | null;
  state: 'pending' | 'approved' | 'denied' | 'redeemed';
  sealed_code: string | null;
  user_id: number | null;
};

/** The approval's code is sealed bound to its row, so no row's sealed code opens as another's. */
const purposeOf = (deviceHash: string) => `device-authorization:${deviceHash}`;

/** RFC 8628 §3.5's errors, with RFC 6749 §5.2's `invalid_grant` for a code that is not (or no longer) one. */
const deviceError = (error: 'authorization_pending' | 'slow_down' | 'access_denied' | 'expired_token' | 'invalid_grant', description: string) =>
  problems.oauth(error, description);

/**
 * One partition of the device authorizations (RFC 8628), `device:<p>` by the user code's
 * partition (the device code names the same partition): the owner of each authorization from the
 * device's request to the poll that takes its tokens. Every transition (the user's decision, a
 * poll) is one transaction here, so a decision is made once and an approval is taken by one poll.
 * The grant itself is the user's `User` object's: an approval carries an authorization code it
 * issued, which the winning poll redeems there as the code flow's exchange does.
 */
export class DeviceAuthorizations extends DurableObject<Env> {
  private readonly sql: SqlStorage;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.sql = plainRows(ctx.storage.sql);
    migrate(ctx.storage, DEVICE_AUTHORIZATIONS_SCHEMA);
  }

  /** Records a new authorization; false when its user code is taken here (the caller draws another). */
  async start(a: NewDeviceAuthorization): Promise<boolean> {
    const inserted = this.ctx.storage.transactionSync(() => {
      this.sql.exec('DELETE FROM device_authorizations WHERE expires_at <= ?', epochSeconds() - KEPT_AFTER_EXPIRY_SECONDS);
      return (
        this.sql
          .exec(
            `INSERT INTO device_authorizations (device_hash, user_code_hash, client_id, scopes, expires_at, interval, state)
             VALUES (?, ?, ?, ?, ?, ?, 'pending') ON CONFLICT DO NOTHING RETURNING 1`,
            a.deviceHash,
            a.userCodeHash,
            a.clientId,
            [...a.scopes].sort().join(' '),
            a.expiresAt,
            DEVICE_FLOW.intervalSeconds,
          )
          .toArray().length > 0
      );
    });
    if (inserted && (await this.ctx.storage.getAlarm()) === null) await this.ctx.storage.setAlarm((a.expiresAt + KEPT_AFTER_EXPIRY_SECONDS) * 1000);
    return inserted;
  }

  /** The authorization a user code names while it waits for its user; null for none, expired or decided. */
  pending(userCodeHash: string): PendingDeviceAuthorization | null {
    const row = this.byUserCode(userCodeHash);
    return row ? { clientId: row.client_id, scopes: row.scopes.split(' ') } : null;
  }

  /** The user's decision, taken once: false when the code names nothing waiting any more (expired, or decided meanwhile). */
  async decide(userCodeHash: string, decision: DeviceDecision): Promise<boolean> {
    const seen = this.byUserCode(userCodeHash);
    if (!seen) return false;
    const sealed = 'approve' in decision ? await seal(this.env, purposeOf(seen.device_hash), decision.approve.code) : null;
    return this.ctx.storage.transactionSync(() => {
      if (this.byUserCode(userCodeHash)?.device_hash !== seen.device_hash) return false;
      if ('approve' in decision) {
        this.sql.exec("UPDATE device_authorizations SET state = 'approved', sealed_code = ?, user_id = ? WHERE device_hash = ?", sealed, decision.approve.userId, seen.device_hash);
      } else {
        this.sql.exec("UPDATE device_authorizations SET state = 'denied' WHERE device_hash = ?", seen.device_hash);
      }
      return true;
    });
  }

  /**
   * RFC 8628 §3.4 and §3.5: a poll by the client the authorization was started for. Waiting, it is
   * `authorization_pending`, or `slow_down` (the interval grows by five seconds) when it came sooner
   * than the interval after the last; denied, `access_denied`; past its lifetime, `expired_token`;
   * approved, the approval, handed to this one poll only (a later poll finds it redeemed).
   */
  async poll(deviceHash: string, clientId: string): Promise<Result<ApprovedDevice>> {
    const now = clock.now();
    const decided = this.ctx.storage.transactionSync((): Result<{ userId: number; sealed: string }> => {
      const row = this.sql.exec<Row>('SELECT * FROM device_authorizations WHERE device_hash = ?', deviceHash).toArray()[0];
      if (!row) return fail(deviceError('invalid_grant', 'The device code is invalid.'));
      if (row.client_id !== clientId) return fail(deviceError('invalid_grant', 'The device code was issued to another client.'));
      if (row.expires_at * 1000 <= now) return fail(deviceError('expired_token', 'The device code has expired.'));
      if (row.state === 'redeemed') return fail(deviceError('invalid_grant', 'The device code has already been used.'));
      if (row.state === 'denied') return fail(deviceError('access_denied', 'The user denied the request.'));
      if (row.state === 'approved') {
        // The sealed code stays with the row (until it is deleted, `alarm`) so that `release` can
        // hand it to the next poll.
        this.sql.exec("UPDATE device_authorizations SET state = 'redeemed', polled_at = ? WHERE device_hash = ?", now, deviceHash);
        return ok({ userId: row.user_id as number, sealed: row.sealed_code as string });
      }
      if (row.polled_at !== null && now - row.polled_at < row.interval * 1000) {
        const interval = row.interval + DEVICE_FLOW.slowDownSeconds;
        this.sql.exec('UPDATE device_authorizations SET interval = ?, polled_at = ? WHERE device_hash = ?', interval, now, deviceHash);
        return fail(deviceError('slow_down', `Polling too fast: wait ${interval} seconds between requests.`));
      }
      this.sql.exec('UPDATE device_authorizations SET polled_at = ? WHERE device_hash = ?', now, deviceHash);
      return fail(deviceError('authorization_pending', 'The user has not yet decided.'));
    });
    if (!decided.ok) return decided;
    const code = await open(this.env, purposeOf(deviceHash), decided.value.sealed);
    if (code === null) return fail(deviceError('invalid_grant', 'The device code is invalid.'));
    return ok({ userId: decided.value.userId, code });
  }

  /**
   * The poll that took the approval could not have its code redeemed (the `User` object's call
   * failed, not its rules): the approval waits for the next poll again. Were the code redeemed
   * after all (an answer lost), that poll's redemption is a replay, which ends the grant (RFC 6749
   * §4.1.2), so no tokens are issued twice.
   */
  release(deviceHash: string): void {
    this.sql.exec("UPDATE device_authorizations SET state = 'approved' WHERE device_hash = ? AND state = 'redeemed' AND sealed_code IS NOT NULL", deviceHash);
  }

  /** Deletes what expired over an hour ago; rings again for the next. */
  async alarm(): Promise<void> {
    const next = this.ctx.storage.transactionSync(() => {
      this.sql.exec('DELETE FROM device_authorizations WHERE expires_at <= ?', epochSeconds() - KEPT_AFTER_EXPIRY_SECONDS);
      return this.sql.exec<{ at: number | null }>('SELECT MIN(expires_at) AS at FROM device_authorizations').one().at;
    });
    if (next !== null) await this.ctx.storage.setAlarm((next + KEPT_AFTER_EXPIRY_SECONDS) * 1000);
  }

  private byUserCode(userCodeHash: string): Row | undefined {
    return this.sql
      .exec<Row>("SELECT * FROM device_authorizations WHERE user_code_hash = ? AND state = 'pending' AND expires_at * 1000 > ?", userCodeHash, clock.now())
      .toArray()[0];
  }
}

/** The partition of a user code (normalized, worker/protocol/device-codes.ts); its device code names the same. */
export const partitionOfUserCode = (env: Env, userCode: string): number => partitionOfName(userCode, partitionCount(env));

/** The device authorizations of one partition. */
export const deviceAuthorizations = (env: Env, partition: number) => env.DEVICE_AUTHORIZATIONS.getByName(partitionName('device', partition));
