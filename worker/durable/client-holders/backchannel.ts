import { KNOCK_VERSION } from '../../../shared/version';
import { clock } from '../../clock';
import { config } from '../../config';
import type { Env } from '../../env';
import { notSent, post, type AttemptResult } from '../../events/delivery';
import { redactedUrl } from '../../events/event';
import { LOGOUT_TOKEN_TYPE, logoutTokenClaims } from '../../protocol/logout-token';
import { signingKeysObject } from '../signing-keys/signing-keys';
import { plainRows } from '../plain-rows';

/**
 * One application's back-channel logout deliveries (OpenID Connect Back-Channel Logout 1.0 §2.5):
 * the queue (`logout_deliveries`) its object's alarm works through, and the log of every attempt
 * (`logout_log`, kept a week, read by administrators at `GET /api/v4/applications/:id/logout_deliveries`).
 * The machinery of webhooks (worker/events/delivery.ts): the URL guard before every attempt, no
 * redirect followed, a capped read, and the webhooks' retry schedule (`WEBHOOK_RETRY_SCHEDULE`).
 * Each attempt signs a new logout token (a fresh `iat` and `exp`) with the same `jti`, so a
 * relying party that got an earlier one can tell a retry.
 */

/** What a user's `User` object hands over: one logout per (user, browser session) of this application. */
export type LogoutNotice = {
  jti: string;
  userId: number;
  sid: string | null;
  issuer: string;
  /** Why access ended (docs/oidc.md, "Back-channel logout"). */
  reason: string;
};

/** One logged attempt, as administrators read it. */
export type LogoutAttempt = {
  id: number;
  jti: string;
  user_id: number;
  sid: string | null;
  reason: string;
  url: string;
  attempt: number;
  response_status: number | null;
  response_body: string;
  error: string | null;
  created_at: string;
};

const LOG_RETENTION_MS = 7 * 24 * 3600_000;
/** Attempts made at once in one pass of the alarm. */
const PASS_LIMIT = 16;

type Row = LogoutNotice & { attempts: number };

export class BackchannelLogouts {
  private readonly sql: SqlStorage;

  constructor(
    private readonly storage: DurableObjectStorage,
    private readonly env: Env,
  ) {
    this.sql = plainRows(storage.sql);
  }

  /**
   * Inside a transaction: queues the notices, due now. Idempotent by `jti` (a handover retried
   * after it arrived), also once delivered: a `jti` in the log is not queued again.
   */
  queue(notices: LogoutNotice[]): void {
    const now = clock.now();
    for (const n of notices) {
      if (this.sql.exec('SELECT 1 FROM logout_log WHERE jti = ? LIMIT 1', n.jti).toArray().length > 0) continue;
      this.sql.exec(
        `INSERT INTO logout_deliveries (jti, user_id, sid, issuer, reason, next_attempt_at) VALUES (?, ?, ?, ?, ?, ?)
         ON CONFLICT (jti) DO NOTHING`,
        n.jti,
        n.userId,
        n.sid,
        n.issuer,
        n.reason,
        now,
      );
    }
  }

  /** When the next attempt is due (epoch ms), or null. */
  nextDue(): number | null {
    return this.sql.exec<{ due: number | null }>('SELECT MIN(next_attempt_at) AS due FROM logout_deliveries').one().due;
  }

  /**
   * The alarm's work: each due delivery once, to the application's `backchannel_logout_uri`
   * (`to` null: it registered none, or it was deleted, and the queue is dropped). Outcomes are
   * recorded in one transaction; a failure is due again after the next step of the schedule,
   * until it runs out.
   */
  async run(to: { clientId: string; uri: string } | null): Promise<void> {
    const now = clock.now();
    if (to === null) {
      this.sql.exec('DELETE FROM logout_deliveries');
      return;
    }
    const { clientId, uri } = to;
    const due = this.sql
      .exec<Row>('SELECT jti, user_id AS userId, sid, issuer, reason, attempts FROM logout_deliveries WHERE next_attempt_at <= ? ORDER BY next_attempt_at LIMIT ?', now, PASS_LIMIT)
      .toArray();
    if (due.length === 0) return;
    const results = await Promise.all(due.map((d) => this.attempt(uri, clientId, d)));
    const schedule = config(this.env).webhookRetrySchedule;
    const at = clock.now();
    this.storage.transactionSync(() => {
      due.forEach((d, i) => {
        const result = results[i];
        const attemptNo = d.attempts + 1;
        const lastTry = attemptNo > schedule.length;
        if (result.ok || lastTry) this.sql.exec('DELETE FROM logout_deliveries WHERE jti = ?', d.jti);
        else this.sql.exec('UPDATE logout_deliveries SET attempts = ?, next_attempt_at = ? WHERE jti = ?', attemptNo, at + schedule[attemptNo - 1] * 1000, d.jti);
        const note = !result.ok && lastTry ? `; no more retries after ${attemptNo} attempts` : '';
        this.sql.exec(
          `INSERT INTO logout_log (jti, user_id, sid, reason, url, attempt, response_status, response_body, error, created_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
          d.jti,
          d.userId,
          d.sid,
          d.reason,
          redactedUrl(uri),
          attemptNo,
          result.status,
          result.responseBody,
          result.ok ? null : `${result.error ?? `HTTP ${result.status}`}${note}`,
          new Date(at).toISOString(),
        );
      });
      this.sql.exec('DELETE FROM logout_log WHERE created_at < ?', new Date(at - LOG_RETENTION_MS).toISOString());
    });
  }

  /** §2.5: a POST of `logout_token` as `application/x-www-form-urlencoded`; a 2xx is done. */
  private async attempt(uri: string, clientId: string, d: Row): Promise<AttemptResult> {
    const claims = logoutTokenClaims({ issuer: d.issuer, clientId, userId: d.userId, sid: d.sid, jti: d.jti, now: Math.floor(clock.now() / 1000) });
    let token: string;
    try {
      token = await signingKeysObject(this.env).sign(claims, LOGOUT_TOKEN_TYPE);
    } catch (e) {
      // Counted as a failed attempt, so the schedule paces the retries.
      return notSent(`The logout token could not be signed: ${e instanceof Error ? e.message : String(e)}`);
    }
    const headers = { 'Content-Type': 'application/x-www-form-urlencoded', 'User-Agent': `Knock/${KNOCK_VERSION}`, 'Cache-Control': 'no-store' };
    return post(uri, headers, new URLSearchParams({ logout_token: token }).toString(), config(this.env));
  }

  /** The attempts of the last seven days, newest first. */
  log(offset: number, limit: number): { total: number; items: LogoutAttempt[] } {
    const since = new Date(clock.now() - LOG_RETENTION_MS).toISOString();
    const total = this.sql.exec<{ n: number }>('SELECT COUNT(*) AS n FROM logout_log WHERE created_at >= ?', since).one().n;
    const items = this.sql
      .exec<LogoutAttempt>(
        'SELECT id, jti, user_id, sid, reason, url, attempt, response_status, response_body, error, created_at FROM logout_log WHERE created_at >= ? ORDER BY id DESC LIMIT ? OFFSET ?',
        since,
        limit,
        offset,
      )
      .toArray();
    return { total, items };
  }
}
