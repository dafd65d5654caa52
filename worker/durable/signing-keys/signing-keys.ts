import { DurableObject } from 'cloudflare:workers';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, importJWK, SignJWT, type JWK, type JWTPayload } from 'jose';
import { open, seal } from '../../auth/secret-box';
import { clock } from '../../clock';
import type { Env } from '../../env';
import { migrate } from '../migrations';
import { signingKeysMigrations } from './schema';
import { plainRows } from '../plain-rows';

const DAY_MS = 24 * 3600 * 1000;
/** Each key signs for this long before the next one takes over. */
const KEY_SIGNS_FOR_MS = 30 * DAY_MS;
/**
 * The next key is published this long before it signs, so relying parties that cache the JWKS
 * (Knock's answer may be cached 5 minutes, and Workers keep it a minute) have it before the first
 * id_token it signs.
 */
const KEY_PUBLISHED_AHEAD_MS = DAY_MS;
/**
 * A key stays published this long after it stopped signing: the last id_token it signed lives two
 * minutes, and a Worker that has not yet heard of an unscheduled rotation may sign with it for one
 * more (its cache of the keys); the rest is for clocks that disagree.
 */
const KEY_KEPT_AFTER_MS = 10 * 60 * 1000;

/** A key as the Worker takes it: the public JWK it publishes, and the private one, sealed. */
export interface PublishedKey {
  kid: string;
  publicJwk: JWK;
  /** secret-box `seal` of the private JWK, purpose `signingKeyPurpose(kid)`. */
  sealedPrivateJwk: string;
  /** Milliseconds: when it starts (or started) signing. */
  signsFrom: number;
  /** Milliseconds: when it leaves the JWKS; null while it has no successor. */
  publishedUntil: number | null;
}

/** What a sealed private key is bound to, so a sealed value moved to another key does not open. */
export const signingKeyPurpose = (kid: string) => `signing-key:${kid}`;

type KeyRow = { kid: string; public_jwk: string; sealed_private_jwk: string; signs_from: number; published_until: number | null };

const toKey = (r: KeyRow): PublishedKey => ({
  kid: r.kid,
  publicJwk: JSON.parse(r.public_jwk) as JWK,
  sealedPrivateJwk: r.sealed_private_jwk,
  signsFrom: r.signs_from,
  publishedUntil: r.published_until,
});

/** A new RS256 key pair (RFC 7518 §3.3, 2048-bit as §3.3 requires at least), named by its RFC 7638 thumbprint. */
const newKeyPair = async (env: Env): Promise<{ kid: string; publicJwk: JWK; sealed: string }> => {
  const { publicKey, privateKey } = await generateKeyPair('RS256', { modulusLength: 2048, extractable: true });
  const pub = await exportJWK(publicKey);
  const kid = await calculateJwkThumbprint(pub, 'sha256');
  const publicJwk: JWK = { kty: pub.kty, n: pub.n, e: pub.e, kid, alg: 'RS256', use: 'sig' };
  const sealed = await seal(env, signingKeyPurpose(kid), JSON.stringify({ ...(await exportJWK(privateKey)), kid, alg: 'RS256' }));
  return { kid, publicJwk, sealed };
};

/**
 * The keys that sign Knock's id_tokens: the one owner of them, a single object (`keys`), read by
 * each Worker isolate about once a minute (worker/oauth/signing-keys.ts keeps them in memory), so
 * it is on no request's path. The first read makes the first key. Every key signs for
 * KEY_SIGNS_FOR_MS; its successor is made and published KEY_PUBLISHED_AHEAD_MS before it takes
 * over, and the old key stays published KEY_KEPT_AFTER_MS after it stopped, then is deleted. The
 * schedule is kept by every read and by the alarm, whichever comes first. `rotateNow` replaces the
 * keys at once (after a leak: docs/deploy.md).
 */
export class SigningKeys extends DurableObject<Env> {
  private readonly sql: SqlStorage;
  /** The running `keep`, so that concurrent reads make one key, not two. */
  private keeping: Promise<void> | null = null;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.sql = plainRows(ctx.storage.sql);
    migrate(ctx.storage, signingKeysMigrations);
  }

  /** The published keys, oldest first, after the schedule has been kept. */
  async published(): Promise<PublishedKey[]> {
    await this.keepSchedule();
    const now = clock.now();
    return this.sql
      .exec<KeyRow>('SELECT * FROM keys WHERE published_until IS NULL OR published_until > ? ORDER BY signs_from', now)
      .toArray()
      .map(toKey);
  }

  /**
   * A JWS of `claims` signed RS256 by the key that signs now, its `kid` and `typ` in the header:
   * for what Knock signs off the request path (logout tokens, from the delivering object's alarm),
   * where the Worker's in-memory keys (worker/oauth/signing-keys.ts) are not at hand.
   */
  async sign(claims: JWTPayload, typ: string): Promise<string> {
    const keys = await this.published();
    const now = clock.now();
    const key = keys.filter((k) => k.signsFrom <= now).sort((a, b) => b.signsFrom - a.signsFrom)[0];
    if (!key) throw new Error('no signing key signs now');
    const jwk = await open(this.env, signingKeyPurpose(key.kid), key.sealedPrivateJwk);
    if (jwk === null) throw new Error(`signing key ${key.kid} does not open with this TOKEN_HASH_KEY`);
    const privateKey = await importJWK(JSON.parse(jwk) as JWK, 'RS256');
    return new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid: key.kid, typ }).sign(privateKey);
  }

  /**
   * A new key that signs from now. `withdraw`: every other key leaves the JWKS at once (a private
   * key leaked: what it signed must no longer verify); else they stay published KEY_KEPT_AFTER_MS,
   * as after a scheduled rotation, and a successor made ahead is dropped.
   */
  async rotateNow(withdraw: boolean): Promise<PublishedKey[]> {
    const made = await this.makeKey();
    this.ctx.storage.transactionSync(() => {
      const now = clock.now();
      if (withdraw) this.sql.exec('DELETE FROM keys');
      else {
        this.sql.exec('DELETE FROM keys WHERE signs_from > ?', now);
        this.sql.exec('UPDATE keys SET published_until = MIN(COALESCE(published_until, ?1), ?1)', now + KEY_KEPT_AFTER_MS);
      }
      this.insert(made, now);
    });
    await this.scheduleAlarm();
    return this.published();
  }

  async alarm(): Promise<void> {
    await this.keepSchedule();
  }

  /** Runs `keep` once at a time. */
  private keepSchedule(): Promise<void> {
    this.keeping ??= this.keep().finally(() => {
      this.keeping = null;
    });
    return this.keeping;
  }

  /**
   * The schedule: expired keys go; with no key signing, one is made that signs from now (the first
   * use); within KEY_PUBLISHED_AHEAD_MS of the current key's end, its successor is made, and the
   * keys before it get the time they leave the JWKS. Then the alarm is set for the next step. A
   * rotation (`rotateNow`) may run while a key is being made: the key is stored only if the
   * schedule, read again in the transaction, still asks for it.
   */
  private async keep(): Promise<void> {
    let due = this.due(clock.now());
    while (due) {
      const wanted = due;
      const made = await this.makeKey();
      due = this.ctx.storage.transactionSync(() => {
        const still = this.due(clock.now());
        if (still === null || still.after !== wanted.after) return still;
        this.insert(made, still.signsFrom);
        return null;
      });
    }
    await this.scheduleAlarm();
  }

  /** The key the schedule asks for now (`after`: the key it succeeds; null for the first), or null; expired keys go. */
  private due(now: number): { signsFrom: number; after: string | null } | null {
    this.sql.exec('DELETE FROM keys WHERE published_until IS NOT NULL AND published_until <= ?', now);
    const current = this.sql.exec<{ kid: string; signs_from: number }>('SELECT kid, signs_from FROM keys WHERE signs_from <= ? ORDER BY signs_from DESC LIMIT 1', now).toArray()[0];
    if (!current) return { signsFrom: now, after: null };
    const next = this.sql.exec('SELECT 1 FROM keys WHERE signs_from > ?', now).toArray().length > 0;
    if (next || now < current.signs_from + KEY_SIGNS_FOR_MS - KEY_PUBLISHED_AHEAD_MS) return null;
    return { signsFrom: Math.max(now + KEY_PUBLISHED_AHEAD_MS, current.signs_from + KEY_SIGNS_FOR_MS), after: current.kid };
  }

  /** A new key pair, sealed. */
  private makeKey(): Promise<{ kid: string; publicJwk: JWK; sealed: string }> {
    return newKeyPair(this.env);
  }

  /** Stores a key; every older key without an end leaves the JWKS KEY_KEPT_AFTER_MS after this one takes over. */
  private insert(made: { kid: string; publicJwk: JWK; sealed: string }, signsFrom: number): void {
    this.sql.exec(
      'UPDATE keys SET published_until = ? WHERE published_until IS NULL AND signs_from < ?',
      signsFrom + KEY_KEPT_AFTER_MS,
      signsFrom,
    );
    this.sql.exec(
      'INSERT INTO keys (kid, public_jwk, sealed_private_jwk, signs_from) VALUES (?, ?, ?, ?)',
      made.kid,
      JSON.stringify(made.publicJwk),
      made.sealed,
      signsFrom,
    );
  }

  /** The alarm rings when the next key is due to be made, or the next retired key to leave. */
  private async scheduleAlarm(): Promise<void> {
    const due = this.sql
      .exec<{ at: number | null }>(
        `SELECT MIN(at) AS at FROM (
           SELECT MIN(published_until) AS at FROM keys WHERE published_until IS NOT NULL
           UNION ALL
           SELECT MAX(signs_from) + ? FROM keys HAVING COUNT(*) > 0
         )`,
        KEY_SIGNS_FOR_MS - KEY_PUBLISHED_AHEAD_MS,
      )
      .one().at;
    if (due !== null) await this.ctx.storage.setAlarm(Math.max(due, clock.now() + 1000));
  }
}

/** The deployment's signing keys. */
export const signingKeysObject = (env: Env) => env.SIGNING_KEYS.getByName('keys');
