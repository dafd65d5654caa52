import { open, seal } from '../../auth/secret-box';
import { clock, isoNow } from '../../clock';
import { config } from '../../config';
import type { Env } from '../../env';
import { afterFailure, ENABLED, isExecutable, PERMANENTLY_DISABLED_FAILURE_THRESHOLD, type FailureState } from '../../events/auto-disable';
import { attempt, newSigningSecret, notSent, type AttemptResult, type Message } from '../../events/delivery';
import { redactedUrl, triggerOf, type EventRecord, type HookTrigger } from '../../events/event';
import { hookPayload } from '../../events/payload';
import type { EventLog, UserLookup } from '../event-log';
import { plainRows } from '../plain-rows';

/**
 * The webhooks of one group or project (hooks, deliveries and hook_logs in namespace-schema.ts):
 * what the hooks API edits, the queue of deliveries the object's alarm works through, and the
 * log of every attempt. Delivery is at least once: a queued (hook, event) leaves the queue only
 * when a 2xx answer came back or its retries ran out, and every attempt sends the same
 * `webhook-id`. Attempts to a hook that has just failed go one at a time, oldest first.
 */

export interface HookRow {
  id: number;
  uuid: string;
  url: string;
  name: string;
  description: string;
  /** Sealed (secret-box.ts); the API never shows either. */
  token: string | null;
  signing_secret: string;
  member_events: boolean;
  access_request_events: boolean;
  enable_ssl_verification: boolean;
  instance_url: string;
  recent_failures: number;
  /** Epoch milliseconds. */
  disabled_until: number | null;
  created_at: string;
  /** Edits so far (`update`). */
  edits: number;
}

/** What creating or editing a hook may set; `token` in clear, sealed here. */
export interface HookSettings {
  url: string;
  name: string;
  description: string;
  token: string | null;
  member_events: boolean;
  access_request_events: boolean;
  enable_ssl_verification: boolean;
}

export interface HookLogRow {
  id: number;
  hook_id: number;
  event_uuid: string;
  trigger: string;
  url: string;
  attempt: number;
  request_headers: Record<string, string>;
  request_body: string;
  response_status: number | null;
  response_headers: Record<string, string>;
  response_body: string;
  duration_ms: number;
  error: string | null;
  created_at: string;
}

/** GitLab's `status` filter of hook events: a code, or a class of codes. */
export type StatusFilter = number | 'successful' | 'client_failure' | 'server_failure';

/** GitLab keeps a hook's delivery log for a week. */
const LOG_RETENTION_MS = 7 * 24 * 3600_000;
/** GitLab's limit is 100 per project and 50 per group; one object serves its hooks, so fewer. */
export const MAX_HOOKS = 20;
/** Attempts in flight at once to a healthy hook, and in one pass of the alarm. */
const HOOK_WINDOW = 8;
const PASS_LIMIT = 32;
/** A pass of the alarm stops taking new work after this long, and sets the alarm again. */
const RUN_BUDGET_MS = 20_000;

type RawHook = Omit<HookRow, 'member_events' | 'access_request_events' | 'enable_ssl_verification'> & {
  member_events: number;
  access_request_events: number;
  enable_ssl_verification: number;
};
const toHook = (r: RawHook): HookRow => ({
  ...r,
  member_events: r.member_events === 1,
  access_request_events: r.access_request_events === 1,
  enable_ssl_verification: r.enable_ssl_verification === 1,
});

type RawLog = Omit<HookLogRow, 'request_headers' | 'response_headers'> & { request_headers: string; response_headers: string };
const toLog = (r: RawLog): HookLogRow => ({ ...r, request_headers: JSON.parse(r.request_headers), response_headers: JSON.parse(r.response_headers) });
const LOG_COLUMNS =
  'id, hook_id, event_uuid, trigger, url, attempt, request_headers, request_body, response_status, response_headers, response_body, duration_ms, error, created_at';

/** GitLab's names of what triggered a delivery (`trigger` in the log). */
const TRIGGER_NAMES: Record<HookTrigger, string> = { member_events: 'member_hooks', access_request_events: 'access_request_hooks' };

interface Due {
  delivery: { id: number; event_seq: number; attempts: number };
  hook: HookRow;
}

/** One attempt made, to be recorded; `queued` when it was a delivery of the queue. */
interface Sent {
  hook: HookRow;
  message: Message;
  trigger: string;
  queued: { id: number; attempts: number } | null;
  result: AttemptResult;
}

export class Webhooks {
  private readonly sql: SqlStorage;
  /** Opened secrets, by their sealed text (sealing is fresh each time, so a new secret never matches an old entry). */
  private readonly opened = new Map<string, string>();
  /** Whether the object has any hook; undefined until read. Most objects have none. */
  private hasHooks: boolean | undefined = undefined;

  constructor(
    private readonly storage: DurableObjectStorage,
    private readonly env: Env,
    private readonly namespaceId: () => number,
  ) {
    this.sql = plainRows(storage.sql);
  }

  // ---- the hooks API ----

  list(offset: number, limit: number): { total: number; items: HookRow[] } {
    const total = this.count();
    const items = this.sql.exec<RawHook>('SELECT * FROM hooks ORDER BY id LIMIT ? OFFSET ?', limit, offset).toArray().map(toHook);
    return { total, items };
  }

  get(id: number): HookRow | null {
    const row = this.sql.exec<RawHook>('SELECT * FROM hooks WHERE id = ?', id).toArray()[0];
    return row ? toHook(row) : null;
  }

  count(): number {
    return this.sql.exec<{ n: number }>('SELECT COUNT(*) AS n FROM hooks').one().n;
  }

  private anyHooks(): boolean {
    this.hasHooks ??= this.count() > 0;
    return this.hasHooks;
  }

  /** A hook's secret token sealed, before the transaction that stores it (sealing awaits). */
  async sealToken(uuid: string, token: string | null): Promise<string | null> {
    return token === null ? null : seal(this.env, this.purpose('token', uuid), token);
  }

  /** A new hook's secrets sealed. */
  async sealed(uuid: string, token: string | null, signingSecret: string): Promise<{ token: string | null; signing_secret: string }> {
    return { token: await this.sealToken(uuid, token), signing_secret: await seal(this.env, this.purpose('signing', uuid), signingSecret) };
  }

  newSecrets(): { uuid: string; signingSecret: string } {
    return { uuid: crypto.randomUUID(), signingSecret: newSigningSecret() };
  }

  /** Inside the caller's transaction. */
  insert(uuid: string, s: HookSettings, sealed: { token: string | null; signing_secret: string }, instanceUrl: string): HookRow {
    this.hasHooks = undefined;
    return toHook(
      this.sql
        .exec<RawHook>(
          `INSERT INTO hooks (uuid, url, name, description, token, signing_secret, member_events, access_request_events, enable_ssl_verification, instance_url, created_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING *`,
          uuid,
          s.url,
          s.name,
          s.description,
          sealed.token,
          sealed.signing_secret,
          s.member_events ? 1 : 0,
          s.access_request_events ? 1 : 0,
          s.enable_ssl_verification ? 1 : 0,
          instanceUrl,
          isoNow(),
        )
        .one(),
    );
  }

  /**
   * Inside the caller's transaction. Editing a hook enables it again (GitLab's `enable!`), and
   * what waited for it is due at once: an edit is how an owner says the receiver is fixed.
   */
  update(id: number, s: Omit<HookSettings, 'token'>, sealedToken: string | null): HookRow {
    this.sql.exec('UPDATE deliveries SET next_attempt_at = MIN(next_attempt_at, ?) WHERE hook_id = ?', clock.now(), id);
    return toHook(
      this.sql
        .exec<RawHook>(
          `UPDATE hooks SET url = ?, name = ?, description = ?, token = ?, member_events = ?, access_request_events = ?,
             enable_ssl_verification = ?, recent_failures = 0, disabled_until = NULL, edits = edits + 1 WHERE id = ? RETURNING *`,
          s.url,
          s.name,
          s.description,
          sealedToken,
          s.member_events ? 1 : 0,
          s.access_request_events ? 1 : 0,
          s.enable_ssl_verification ? 1 : 0,
          id,
        )
        .one(),
    );
  }

  /** Inside the caller's transaction: the hook, its queue and its log. */
  remove(id: number): void {
    this.hasHooks = undefined;
    this.sql.exec('DELETE FROM deliveries WHERE hook_id = ?', id);
    this.sql.exec('DELETE FROM hook_logs WHERE hook_id = ?', id);
    this.sql.exec('DELETE FROM hooks WHERE id = ?', id);
  }

  /** Inside the caller's transaction. */
  removeAll(): void {
    this.hasHooks = undefined;
    this.sql.exec('DELETE FROM deliveries');
    this.sql.exec('DELETE FROM hook_logs');
    this.sql.exec('DELETE FROM hooks');
  }

  /** Opens a hook's secret token (to send it) in clear. */
  async openToken(hook: HookRow): Promise<string | null> {
    return hook.token === null ? null : this.openSealed(this.purpose('token', hook.uuid), hook.token);
  }

  // ---- the delivery queue ----

  /**
   * Inside the transaction that recorded the event: one delivery, due now, for each hook that
   * subscribes to it and existed when it happened (an event copied up from below later than it
   * happened is not sent to a hook made in between). A disabled hook gets none until it is
   * edited, as in GitLab; one that rests does, and they wait for the rest to end.
   */
  enqueue(eventSeq: number, e: Pick<EventRecord, 'action' | 'created_at'>): void {
    const trigger = triggerOf(e.action);
    if (trigger === null || !this.anyHooks()) return;
    this.sql.exec(
      `INSERT INTO deliveries (hook_id, event_seq, next_attempt_at)
       SELECT id, ?, ? FROM hooks WHERE ${trigger} = 1 AND created_at <= ? AND recent_failures <= ?`,
      eventSeq,
      clock.now(),
      e.created_at,
      PERMANENTLY_DISABLED_FAILURE_THRESHOLD,
    );
  }

  /**
   * When the next delivery is due (epoch ms), or null when none is: the earliest queued attempt
   * of each hook that is not disabled, no sooner than the end of a hook's rest.
   */
  nextDue(): number | null {
    if (!this.anyHooks()) return null;
    return this.sql
      .exec<{ due: number | null }>(
        `SELECT MIN(due) AS due FROM (
           SELECT MAX(COALESCE(h.disabled_until, 0), (SELECT MIN(d.next_attempt_at) FROM deliveries d WHERE d.hook_id = h.id)) AS due
           FROM hooks h WHERE h.recent_failures <= ?)`,
        PERMANENTLY_DISABLED_FAILURE_THRESHOLD,
      )
      .one().due;
  }

  /**
   * The alarm's work: sends what is due, a window at a time per healthy hook and one at a time to
   * a failing one, until nothing more is due or the pass has run long enough. Each window's
   * outcomes are recorded in one transaction.
   */
  async run(events: EventLog, lookup: UserLookup): Promise<void> {
    const deadline = clock.now() + RUN_BUDGET_MS;
    for (;;) {
      const batch = this.dueBatch(clock.now());
      if (batch.length === 0 || clock.now() > deadline) return;
      const seqs = [...new Set(batch.map((b) => b.delivery.event_seq))];
      const loaded = seqs.flatMap((seq) => events.at(seq) ?? []);
      // One body per event, the same for every hook and every retry.
      const messages = new Map((await events.withNames(loaded, lookup)).map(({ seq, record }) => [seq, { record, body: JSON.stringify(hookPayload(record)) }]));
      const sent = await Promise.all(
        batch.map(async ({ delivery, hook }): Promise<Sent | null> => {
          const event = messages.get(delivery.event_seq);
          const trigger = event && triggerOf(event.record.action);
          if (!event || !trigger) return null;
          const message = { id: event.record.uuid, body: event.body };
          return { hook, message, trigger: TRIGGER_NAMES[trigger], queued: delivery, result: await this.attemptTo(hook, message) };
        }),
      );
      const gone = batch.filter((_, i) => sent[i] === null).map((b) => b.delivery.id);
      this.storage.transactionSync(() => {
        if (gone.length > 0) this.sql.exec('DELETE FROM deliveries WHERE id IN (SELECT value FROM json_each(?))', JSON.stringify(gone));
        this.settle(sent.filter((x): x is Sent => x !== null));
      });
    }
  }

  private dueBatch(now: number): Due[] {
    const hooks = this.sql.exec<RawHook>('SELECT * FROM hooks WHERE recent_failures <= ? ORDER BY id', PERMANENTLY_DISABLED_FAILURE_THRESHOLD).toArray().map(toHook);
    const batch: Due[] = [];
    for (const hook of hooks) {
      if (!isExecutable(hook, now)) continue;
      const window = Math.min(hook.recent_failures > 0 ? 1 : HOOK_WINDOW, PASS_LIMIT - batch.length);
      if (window <= 0) break;
      // The oldest due first; a failing hook only its single earliest queued delivery.
      const rows = this.sql
        .exec<{ id: number; event_seq: number; attempts: number; next_attempt_at: number }>(
          'SELECT id, event_seq, attempts, next_attempt_at FROM deliveries WHERE hook_id = ? ORDER BY next_attempt_at, id LIMIT ?',
          hook.id,
          window,
        )
        .toArray()
        .filter((d) => d.next_attempt_at <= now);
      for (const d of rows) batch.push({ delivery: d, hook });
    }
    return batch;
  }

  /** One attempt to `hook` now, outside the queue (a resend or a test), logged like any other. */
  async send(hook: HookRow, message: Message, trigger: string): Promise<AttemptResult> {
    const result = await this.attemptTo(hook, message);
    this.storage.transactionSync(() => this.settle([{ hook, message, trigger, queued: null, result }]));
    return result;
  }

  private async attemptTo(hook: HookRow, message: Message): Promise<AttemptResult> {
    const signingSecret = await this.openSealed(this.purpose('signing', hook.uuid), hook.signing_secret);
    if (signingSecret === null) return notSent('The signing secret could not be opened (was TOKEN_HASH_KEY changed?)');
    const destination = { url: hook.url, uuid: hook.uuid, token: await this.openToken(hook), signingSecret, instance: hook.instance_url };
    return attempt(destination, message, config(this.env));
  }

  /**
   * Inside a transaction: what attempts came to. Each hook's failure count follows its outcomes
   * in order (GitLab's `enable!` and `backoff!`); a queued delivery is gone after a success or its
   * last retry, else due again after the next step of the retry schedule; every attempt is logged.
   */
  private settle(sent: Sent[]): void {
    const now = clock.now();
    const schedule = config(this.env).webhookRetrySchedule;
    const states = new Map<number, FailureState & { edits: number }>();
    const logs: unknown[] = [];
    const done: number[] = [];
    for (const { hook, message, trigger, queued, result } of sent) {
      let state = states.get(hook.id);
      if (!state) {
        const current = this.get(hook.id);
        if (!current) {
          if (queued) done.push(queued.id);
          continue;
        }
        state = { recent_failures: current.recent_failures, disabled_until: current.disabled_until, edits: current.edits };
      }
      // An attempt begun before an edit of the hook (the owner's fix) went to the hook as it was:
      // its outcome says nothing of the hook now, whose deliveries the edit made due at once.
      const counts = state.edits === hook.edits;
      if (counts) states.set(hook.id, { ...(result.ok ? ENABLED : afterFailure(state, now)), edits: state.edits });
      const attemptNo = (queued?.attempts ?? 0) + 1;
      const lastTry = queued !== null && attemptNo > schedule.length;
      if (queued && (result.ok || (counts && lastTry))) done.push(queued.id);
      else if (queued && counts) this.sql.exec('UPDATE deliveries SET attempts = ?, next_attempt_at = ? WHERE id = ?', attemptNo, now + schedule[attemptNo - 1] * 1000, queued.id);
      const note = !result.ok && lastTry ? `; no more retries after ${attemptNo} attempts` : '';
      logs.push([
        hook.id,
        message.id,
        trigger,
        redactedUrl(hook.url),
        attemptNo,
        JSON.stringify(result.requestHeaders),
        message.body,
        result.status,
        JSON.stringify(result.responseHeaders),
        result.responseBody,
        result.durationMs,
        result.ok ? null : `${result.error ?? `HTTP ${result.status}`}${note}`,
        new Date(now).toISOString(),
      ]);
    }
    for (const [id, state] of states) this.sql.exec('UPDATE hooks SET recent_failures = ?, disabled_until = ? WHERE id = ?', state.recent_failures, state.disabled_until, id);
    if (done.length > 0) this.sql.exec('DELETE FROM deliveries WHERE id IN (SELECT value FROM json_each(?))', JSON.stringify(done));
    if (logs.length > 0) {
      // All of them in one statement: each element of the JSON array is one row's values.
      this.sql.exec(
        `INSERT INTO hook_logs (hook_id, event_uuid, trigger, url, attempt, request_headers, request_body, response_status, response_headers, response_body, duration_ms, error, created_at)
         SELECT value ->> 0, value ->> 1, value ->> 2, value ->> 3, value ->> 4, value ->> 5, value ->> 6, value ->> 7, value ->> 8, value ->> 9, value ->> 10, value ->> 11, value ->> 12
         FROM json_each(?)`,
        JSON.stringify(logs),
      );
    }
  }

  // ---- the delivery log ----

  /** A hook's attempts of the last seven days, newest first. */
  logs(hookId: number, status: StatusFilter | undefined, offset: number, limit: number): { total: number; items: HookLogRow[] } {
    const where = ['hook_id = ?', 'created_at >= ?'];
    const args: (string | number)[] = [hookId, new Date(clock.now() - LOG_RETENTION_MS).toISOString()];
    if (typeof status === 'number') {
      where.push('response_status = ?');
      args.push(status);
    } else if (status !== undefined) {
      const from = { successful: 200, client_failure: 400, server_failure: 500 }[status];
      where.push('response_status BETWEEN ? AND ?');
      args.push(from, from + 99);
    }
    const clause = where.join(' AND ');
    const total = this.sql.exec<{ n: number }>(`SELECT COUNT(*) AS n FROM hook_logs WHERE ${clause}`, ...args).one().n;
    const items = this.sql
      .exec<RawLog>(`SELECT ${LOG_COLUMNS} FROM hook_logs WHERE ${clause} ORDER BY id DESC LIMIT ? OFFSET ?`, ...args, limit, offset)
      .toArray()
      .map(toLog);
    return { total, items };
  }

  /** One attempt of the last seven days. */
  log(hookId: number, logId: number): HookLogRow | null {
    const row = this.sql
      .exec<RawLog>(`SELECT ${LOG_COLUMNS} FROM hook_logs WHERE id = ? AND hook_id = ? AND created_at >= ?`, logId, hookId, new Date(clock.now() - LOG_RETENTION_MS).toISOString())
      .toArray()[0];
    return row ? toLog(row) : null;
  }

  /** Drops log entries older than seven days. */
  prune(): void {
    this.sql.exec('DELETE FROM hook_logs WHERE created_at < ?', new Date(clock.now() - LOG_RETENTION_MS).toISOString());
  }

  // ---- secrets ----

  private purpose(what: 'token' | 'signing', uuid: string): string {
    return `webhook ${what} ${this.namespaceId()} ${uuid}`;
  }

  private async openSealed(purpose: string, sealed: string): Promise<string | null> {
    const cached = this.opened.get(sealed);
    if (cached !== undefined) return cached;
    const plain = await open(this.env, purpose, sealed);
    if (this.opened.size >= 2 * MAX_HOOKS) this.opened.clear();
    if (plain !== null) this.opened.set(sealed, plain);
    return plain;
  }
}
