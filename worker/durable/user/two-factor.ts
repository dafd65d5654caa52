import {
  generateAuthenticationOptions,
  generateRegistrationOptions,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
  type AuthenticationResponseJSON,
  type PublicKeyCredentialCreationOptionsJSON,
  type PublicKeyCredentialRequestOptionsJSON,
  type RegistrationResponseJSON,
} from '@simplewebauthn/server';
import { RpcTarget } from 'cloudflare:workers';
import { base64url, fromBase64url, hex, randomBytes } from '../../auth/crypto';
import { open, seal } from '../../auth/secret-box';
import { base32, matchTotp, otpauthUri, TOTP_SECRET_BYTES } from '../../auth/totp';
import { clock, isoNow } from '../../clock';
import type { Env } from '../../env';
import { hashSecret } from '../../store/tokens';
import { directory } from '../directory/directory';
import type { UserRow } from '../directory/types';
import { plainRows } from '../plain-rows';

/**
 * The user's second factor, kept in their `User` object (the tables of schema.ts from `totp` on):
 * a TOTP secret (RFC 6238, sealed with auth/secret-box.ts), WebAuthn passkeys (Web Authentication
 * Level 3, verified by @simplewebauthn/server) with their signature counters, and ten recovery
 * codes as keyed hashes, each good once. Also the sign-ins waiting for their second step. Every
 * check that reads and then writes (a TOTP step used once, a recovery code used once, a challenge
 * answered once, a counter that only rises) runs in one transaction; the slow parts (opening the
 * secret, HMACs, signature checks) run before it and are checked again inside.
 *
 * Whether the user has a factor is told to the Directory (`users.two_factor_enabled`, for the API's
 * `two_factor_enabled`) after each change, and again by the object's alarm until it took it.
 */

/** Who the passkeys are for (Web Authentication §5.4.2): this deployment's public origin and its host. */
export interface RelyingParty {
  id: string;
  origin: string;
  name: string;
}

interface PasskeyInfo {
  id: string;
  name: string;
  createdAt: string;
  lastUsedAt: string | null;
}

export interface TwoFactorStatus {
  enabled: boolean;
  totp: 'off' | 'pending' | 'on';
  passkeys: PasskeyInfo[];
  recoveryCodesLeft: number;
}

/** A sign-in with the right password, waiting for the second factor. */
interface SecondStep {
  returnTo: string;
  totp: boolean;
  passkeys: boolean;
}

/** What proves the second step: a code (TOTP or recovery code, one field as GitLab's) or a passkey's answer. */
export type SecondFactorProof = { code: string } | { passkey: AuthenticationResponseJSON; rp: RelyingParty };

type SecondStepResult = { signedIn: true; returnTo: string } | { signedIn: false; problem: 'invalid' | 'expired' | 'inactive' };

/** A new session's facts, as session.ts makes them. */
interface NewSession {
  idHash: string;
  csrfToken: string;
  ttlSeconds: number;
}

/** What the `User` object lends: its sessions and its alarm. */
interface TwoFactorHost {
  createSession(user: UserRow, idHash: string, csrfToken: string, ttlSeconds: number): boolean;
  /** The user as the object was last told, while active. */
  activeUser(): UserRow | null;
  /** Makes the alarm ring by `at` (ms), set in this turn: with the transaction just committed. */
  armBy(at: number): void;
}

const RECOVERY_CODE_COUNT = 10;
/** A challenge or a second step lasts this long (Web Authentication §5.4: a few minutes). */
export const SECOND_STEP_SECONDS = 300;
/** Wrong codes a second step takes before the password must be given again. */
const SECOND_STEP_FAILURES = 5;
/** The Directory is asked again this long after it could not take the flag. */
const FLAG_RETRY_MS = 10_000;
const TOTP_PURPOSE = 'totp secret';
const REGISTER = 'register';

/** Recovery codes as GitLab words them: 16 hex characters; typed with any case, spaces or dashes. */
const normalise = (code: string) => code.replace(/[\s-]/g, '').toLowerCase();
const recoveryHash = (env: Env, code: string) => hashSecret(env, `recovery:${normalise(code)}`);

/** Whether the user has a second factor: a confirmed TOTP secret or a passkey. */
export const hasSecondFactor = (sql: SqlStorage): boolean =>
  sql.exec('SELECT 1 FROM totp WHERE confirmed = 1 UNION ALL SELECT 1 FROM passkeys LIMIT 1').toArray().length > 0;

export class TwoFactor extends RpcTarget {
  private readonly sql: SqlStorage;

  constructor(
    private readonly storage: DurableObjectStorage,
    private readonly env: Env,
    private readonly userId: number,
    private readonly host: TwoFactorHost,
  ) {
    super();
    this.sql = plainRows(storage.sql);
  }

  // ---- what the user has ----

  status(): TwoFactorStatus {
    const totp = this.sql.exec<{ confirmed: number }>('SELECT confirmed FROM totp').toArray()[0];
    const passkeys = this.sql
      .exec<{ credential_id: string; name: string; created_at: string; last_used_at: string | null }>(
        'SELECT credential_id, name, created_at, last_used_at FROM passkeys ORDER BY created_at, credential_id',
      )
      .toArray()
      .map((p) => ({ id: p.credential_id, name: p.name, createdAt: p.created_at, lastUsedAt: p.last_used_at }));
    const recoveryCodesLeft = this.sql.exec<{ n: number }>('SELECT COUNT(*) AS n FROM recovery_codes').one().n;
    return { enabled: this.enabled(), totp: totp ? (totp.confirmed ? 'on' : 'pending') : 'off', passkeys, recoveryCodesLeft };
  }

  // ---- TOTP ----

  /** The secret being enrolled (made now if none is pending), as authenticator apps take it; null once TOTP is on. */
  async totpEnrolment(account: string, issuer: string): Promise<{ secret: string; uri: string } | null> {
    const sealed = await seal(this.env, `${TOTP_PURPOSE}:${this.userId}`, base64url(randomBytes(TOTP_SECRET_BYTES)));
    this.sql.exec('INSERT INTO totp (singleton, sealed_secret) VALUES (1, ?) ON CONFLICT DO NOTHING', sealed);
    const row = this.sql.exec<{ sealed_secret: string; confirmed: number }>('SELECT sealed_secret, confirmed FROM totp').one();
    if (row.confirmed) return null;
    const secret = await this.openSecret(row.sealed_secret);
    return { secret: base32(secret), uri: otpauthUri(secret, account, issuer) };
  }

  /** Turns the pending TOTP on with a code from the app; the recovery codes when this is the user's first factor. */
  async confirmTotp(code: string): Promise<{ ok: true; recoveryCodes: string[] | null } | { ok: false }> {
    const row = this.sql.exec<{ sealed_secret: string; confirmed: number }>('SELECT sealed_secret, confirmed FROM totp').toArray()[0];
    if (!row || row.confirmed) return { ok: false };
    const step = await matchTotp(await this.openSecret(row.sealed_secret), code, clock.now(), null);
    if (step === null) return { ok: false };
    const codes = await this.newRecoveryCodes();
    const done = this.storage.transactionSync(() => {
      const changed = this.sql.exec('UPDATE totp SET confirmed = 1, last_step = ? WHERE confirmed = 0 AND sealed_secret = ? RETURNING 1', step, row.sealed_secret).toArray();
      if (changed.length === 0) return null;
      return this.afterAdding(codes);
    });
    if (done === null) return { ok: false };
    await this.pushFlag();
    return { ok: true, recoveryCodes: done };
  }

  // ---- passkeys ----

  /** `navigator.credentials.create()`'s options for a new passkey; the challenge is kept for SECOND_STEP_SECONDS. */
  async registrationOptions(user: Pick<UserRow, 'id' | 'username' | 'name'>, rp: RelyingParty): Promise<PublicKeyCredentialCreationOptionsJSON> {
    const options = await generateRegistrationOptions({
      rpName: rp.name,
      rpID: rp.id,
      userName: user.username,
      userDisplayName: user.name,
      userID: Uint8Array.from(new TextEncoder().encode(String(user.id))),
      attestationType: 'none',
      excludeCredentials: this.credentials(),
      // A discoverable credential (a passkey), verified by the device where it can be.
      authenticatorSelection: { residentKey: 'preferred', userVerification: 'preferred' },
    });
    this.keepChallenge(REGISTER, options.challenge, clock.now() + SECOND_STEP_SECONDS * 1000);
    return options;
  }

  /** Stores the passkey the browser made (Web Authentication §7.1); the recovery codes when it is the user's first factor. */
  async registerPasskey(name: string, response: RegistrationResponseJSON, rp: RelyingParty): Promise<{ ok: true; recoveryCodes: string[] | null } | { ok: false }> {
    const challenge = this.liveChallenge(REGISTER);
    if (!challenge) return { ok: false };
    let info;
    try {
      const verified = await verifyRegistrationResponse({ response, expectedChallenge: challenge, expectedOrigin: rp.origin, expectedRPID: rp.id, requireUserVerification: false });
      if (!verified.verified) return { ok: false };
      info = verified.registrationInfo;
    } catch {
      return { ok: false };
    }
    const codes = await this.newRecoveryCodes();
    const done = this.storage.transactionSync(() => {
      if (!this.takeChallenge(REGISTER, challenge)) return null;
      const c = info.credential;
      const added = this.sql
        .exec(
          `INSERT INTO passkeys (credential_id, name, public_key, counter, transports, created_at) VALUES (?, ?, ?, ?, ?, ?)
           ON CONFLICT DO NOTHING RETURNING 1`,
          c.id,
          name,
          base64url(c.publicKey),
          c.counter,
          JSON.stringify(c.transports ?? []),
          isoNow(),
        )
        .toArray();
      return added.length === 0 ? null : this.afterAdding(codes);
    });
    if (done === null) return { ok: false };
    await this.pushFlag();
    return { ok: true, recoveryCodes: done };
  }

  /** Removes one passkey; false when there is no such passkey. */
  async deletePasskey(credentialId: string): Promise<boolean> {
    const gone = this.storage.transactionSync(() => {
      const deleted = this.sql.exec('DELETE FROM passkeys WHERE credential_id = ? RETURNING 1', credentialId).toArray().length > 0;
      if (deleted && !this.enabled()) this.sql.exec('DELETE FROM recovery_codes');
      this.markFlag();
      return deleted;
    });
    await this.pushFlag();
    return gone;
  }

  // ---- recovery codes, turning it off ----

  /** Ten new recovery codes, the old ones ended; null when the user has no second factor. */
  async regenerateRecoveryCodes(): Promise<string[] | null> {
    const codes = await this.newRecoveryCodes();
    return this.storage.transactionSync(() => {
      if (!this.enabled()) return null;
      this.replaceRecoveryCodes(codes.hashes);
      return codes.codes;
    });
  }

  /** Removes every factor and recovery code (the user's own choice, or an administrator's reset); whether there was one. */
  async disable(): Promise<boolean> {
    const was = this.storage.transactionSync(() => {
      const enabled = this.enabled();
      for (const table of ['totp', 'passkeys', 'recovery_codes', 'webauthn_challenges', 'second_steps']) this.sql.exec(`DELETE FROM ${table}`);
      this.markFlag();
      return enabled;
    });
    await this.pushFlag();
    return was;
  }

  // ---- signing in ----

  /**
   * After the password was right: a session at once for a user without a second factor, else a
   * second step under `step.idHash` (the caller sets its cookie) that leads to `returnTo`.
   */
  beginSignIn(user: UserRow, session: NewSession, step: { idHash: string; returnTo: string }): 'session' | 'second-step' | 'inactive' {
    if (!this.enabled()) return this.host.createSession(user, session.idHash, session.csrfToken, session.ttlSeconds) ? 'session' : 'inactive';
    const now = clock.now();
    this.sql.exec('DELETE FROM second_steps WHERE expires_at <= ?', now);
    this.sql.exec('INSERT INTO second_steps (id_hash, return_to, expires_at) VALUES (?, ?, ?)', step.idHash, step.returnTo, now + SECOND_STEP_SECONDS * 1000);
    return 'second-step';
  }

  /** The waiting second step and the factors it may be answered with; null when there is none (expired, used). */
  secondStep(stepHash: string): SecondStep | null {
    const row = this.liveStep(stepHash);
    if (!row) return null;
    const totp = this.sql.exec('SELECT 1 FROM totp WHERE confirmed = 1').toArray().length > 0;
    const passkeys = this.sql.exec('SELECT 1 FROM passkeys LIMIT 1').toArray().length > 0;
    return { returnTo: row.return_to, totp, passkeys };
  }

  /** `navigator.credentials.get()`'s options for a second step, with its own challenge; null when the step is gone. */
  async passkeyOptions(stepHash: string, rp: RelyingParty): Promise<PublicKeyCredentialRequestOptionsJSON | null> {
    const row = this.liveStep(stepHash);
    if (!row) return null;
    const options = await generateAuthenticationOptions({ rpID: rp.id, allowCredentials: this.credentials(), userVerification: 'preferred' });
    this.keepChallenge(`step:${stepHash}`, options.challenge, row.expires_at);
    return options;
  }

  /**
   * Answers a second step: the session starts (under `session`) in the transaction that uses the
   * TOTP step, the recovery code or the passkey's challenge. A wrong answer counts; the fifth ends
   * the step.
   */
  async completeSecondStep(stepHash: string, proof: SecondFactorProof, session: NewSession): Promise<SecondStepResult> {
    const step = this.liveStep(stepHash);
    if (!step) return { signedIn: false, problem: 'expired' };
    const purpose = `step:${stepHash}`;
    const challenge = this.liveChallenge(purpose);
    const check =
      'code' in proof
        ? await this.codeCheck(proof.code)
        : await this.passkeyCheck(proof.passkey, proof.rp, challenge, false, () => challenge !== null && this.takeChallenge(purpose, challenge));
    return this.storage.transactionSync((): SecondStepResult => {
      if (!this.liveStep(stepHash)) return { signedIn: false, problem: 'expired' };
      if (!check()) {
        this.sql.exec('UPDATE second_steps SET failures = failures + 1 WHERE id_hash = ?', stepHash);
        this.sql.exec('DELETE FROM second_steps WHERE id_hash = ? AND failures >= ?', stepHash, SECOND_STEP_FAILURES);
        return { signedIn: false, problem: 'invalid' };
      }
      this.sql.exec('DELETE FROM second_steps WHERE id_hash = ?', stepHash);
      this.sql.exec('DELETE FROM webauthn_challenges WHERE purpose = ?', `step:${stepHash}`);
      const user = this.host.activeUser();
      if (!user || !this.host.createSession(user, session.idHash, session.csrfToken, session.ttlSeconds)) return { signedIn: false, problem: 'inactive' };
      return { signedIn: true, returnTo: step.return_to };
    });
  }

  /**
   * A sign-in with a passkey alone (a discoverable credential whose user handle named this user),
   * answering `challenge`, which the sign-in page made and sealed in its cookie until `expiresAt`
   * (ms): the device must have verified the user, and each challenge signs in once (kept here as
   * used until it expires). The session starts in the transaction that spends it.
   */
  async signInWithPasskey(response: AuthenticationResponseJSON, rp: RelyingParty, challenge: string, expiresAt: number, session: NewSession): Promise<SecondStepResult> {
    if (expiresAt <= clock.now()) return { signedIn: false, problem: 'expired' };
    const used = `used:${challenge}`;
    const check = await this.passkeyCheck(response, rp, challenge, true, () => {
      this.sql.exec('DELETE FROM webauthn_challenges WHERE expires_at <= ?', clock.now());
      return this.sql.exec('INSERT INTO webauthn_challenges (purpose, challenge, expires_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING RETURNING 1', used, challenge, expiresAt).toArray().length > 0;
    });
    return this.storage.transactionSync((): SecondStepResult => {
      if (!check()) return { signedIn: false, problem: 'invalid' };
      const user = this.host.activeUser();
      if (!user || !this.host.createSession(user, session.idHash, session.csrfToken, session.ttlSeconds)) return { signedIn: false, problem: 'inactive' };
      return { signedIn: true, returnTo: '/' };
    });
  }

  // ---- the Directory's copy ----

  /** Tells the Directory whether the user has a factor, when it has not taken the latest; the alarm tries again. */
  async pushFlag(): Promise<void> {
    const row = this.sql.exec<{ enabled: number; pushed: number }>('SELECT enabled, pushed FROM two_factor_flag').toArray()[0];
    if (!row || row.pushed) return;
    // Armed before any await, in the turn of the transaction that marked the flag: a crash before
    // the push below leaves the alarm to retry it.
    this.host.armBy(clock.now() + FLAG_RETRY_MS);
    try {
      const taken = await directory(this.env).setTwoFactorEnabled(this.userId, row.enabled === 1);
      if (taken) this.sql.exec('UPDATE two_factor_flag SET pushed = 1 WHERE enabled = ?', row.enabled);
    } catch (e) {
      console.error('two_factor_enabled not pushed to the Directory', e);
    }
  }

  // ---- helpers ----

  private enabled(): boolean {
    return hasSecondFactor(this.sql);
  }

  /** In the transaction that added a factor: the flag to push and, for a first factor, new recovery codes (shown once). */
  private afterAdding(codes: { codes: string[]; hashes: string[] }): string[] | null {
    const first = this.sql.exec<{ enabled: number }>('SELECT enabled FROM two_factor_flag').toArray()[0]?.enabled !== 1;
    this.markFlag();
    if (!first) return null;
    this.replaceRecoveryCodes(codes.hashes);
    return codes.codes;
  }

  /** Queues the flag for the Directory when it changed (in the caller's transaction). */
  private markFlag(): void {
    const enabled = this.enabled() ? 1 : 0;
    this.sql.exec(
      `INSERT INTO two_factor_flag (singleton, enabled, pushed) VALUES (1, ?, 0)
       ON CONFLICT (singleton) DO UPDATE SET enabled = excluded.enabled, pushed = 0 WHERE two_factor_flag.enabled != excluded.enabled`,
      enabled,
    );
  }

  private replaceRecoveryCodes(hashes: string[]): void {
    this.sql.exec('DELETE FROM recovery_codes');
    for (const h of hashes) this.sql.exec('INSERT INTO recovery_codes (hash) VALUES (?)', h);
  }

  private async newRecoveryCodes(): Promise<{ codes: string[]; hashes: string[] }> {
    const codes = Array.from({ length: RECOVERY_CODE_COUNT }, () => hex(randomBytes(8)));
    return { codes, hashes: await Promise.all(codes.map((c) => recoveryHash(this.env, c))) };
  }

  private async openSecret(sealed: string): Promise<Uint8Array> {
    const plain = await open(this.env, `${TOTP_PURPOSE}:${this.userId}`, sealed);
    if (plain === null) throw new Error('The TOTP secret does not open under this deployment key');
    return fromBase64url(plain);
  }

  private credentials(): { id: string; transports?: string[] }[] {
    return this.sql
      .exec<{ credential_id: string; transports: string }>('SELECT credential_id, transports FROM passkeys')
      .toArray()
      .map((p) => ({ id: p.credential_id, transports: JSON.parse(p.transports) as string[] }));
  }

  private liveStep(stepHash: string): { return_to: string; expires_at: number } | null {
    const row = this.sql.exec<{ return_to: string; expires_at: number }>('SELECT return_to, expires_at FROM second_steps WHERE id_hash = ?', stepHash).toArray()[0];
    return row && row.expires_at > clock.now() ? row : null;
  }

  private keepChallenge(purpose: string, challenge: string, expiresAt: number): void {
    this.sql.exec('DELETE FROM webauthn_challenges WHERE expires_at <= ?', clock.now());
    this.sql.exec(
      'INSERT INTO webauthn_challenges (purpose, challenge, expires_at) VALUES (?, ?, ?) ON CONFLICT (purpose) DO UPDATE SET challenge = excluded.challenge, expires_at = excluded.expires_at',
      purpose,
      challenge,
      expiresAt,
    );
  }

  private liveChallenge(purpose: string): string | null {
    const row = this.sql.exec<{ challenge: string; expires_at: number }>('SELECT challenge, expires_at FROM webauthn_challenges WHERE purpose = ?', purpose).toArray()[0];
    return row && row.expires_at > clock.now() ? row.challenge : null;
  }

  /** Uses a challenge once: true when it was still the live one. */
  private takeChallenge(purpose: string, challenge: string): boolean {
    return this.sql.exec('DELETE FROM webauthn_challenges WHERE purpose = ? AND challenge = ? AND expires_at > ? RETURNING 1', purpose, challenge, clock.now()).toArray().length > 0;
  }

  /**
   * A code's check, to run in the transaction: a TOTP code for a step later than the last one used
   * (which it then becomes), else an unused recovery code (which it then deletes).
   */
  private async codeCheck(code: string): Promise<() => boolean> {
    const totp = this.sql.exec<{ sealed_secret: string; last_step: number | null }>('SELECT sealed_secret, last_step FROM totp WHERE confirmed = 1').toArray()[0];
    const step = totp ? await matchTotp(await this.openSecret(totp.sealed_secret), code, clock.now(), totp.last_step) : null;
    const hash = await recoveryHash(this.env, code);
    return () => {
      if (step !== null && this.sql.exec('UPDATE totp SET last_step = ? WHERE confirmed = 1 AND (last_step IS NULL OR last_step < ?) RETURNING 1', step, step).toArray().length > 0) return true;
      return this.sql.exec('DELETE FROM recovery_codes WHERE hash = ? RETURNING 1', hash).toArray().length > 0;
    };
  }

  /**
   * A passkey's answer to `challenge` (Web Authentication §7.2), to settle in the transaction:
   * `useChallenge` spends the challenge (false: already spent), and the signature counter only
   * rises (§6.1.1: a counter that did not rise may be a cloned authenticator), when the
   * authenticator keeps one. `userVerification`: the device must have verified the user (a
   * passkey that signs in alone).
   */
  private async passkeyCheck(
    response: AuthenticationResponseJSON,
    rp: RelyingParty,
    challenge: string | null,
    userVerification: boolean,
    useChallenge: () => boolean,
  ): Promise<() => boolean> {
    const stored = this.sql
      .exec<{ public_key: string; counter: number; transports: string }>('SELECT public_key, counter, transports FROM passkeys WHERE credential_id = ?', response.id)
      .toArray()[0];
    if (!challenge || !stored) return () => false;
    let newCounter: number;
    try {
      const verified = await verifyAuthenticationResponse({
        response,
        expectedChallenge: challenge,
        expectedOrigin: rp.origin,
        expectedRPID: rp.id,
        credential: { id: response.id, publicKey: fromBase64url(stored.public_key), counter: stored.counter, transports: JSON.parse(stored.transports) as string[] },
        requireUserVerification: userVerification,
      });
      if (!verified.verified) return () => false;
      newCounter = verified.authenticationInfo.newCounter;
    } catch {
      return () => false;
    }
    return () => {
      if (!useChallenge()) return false;
      return (
        this.sql
          .exec(
            'UPDATE passkeys SET counter = ?, last_used_at = ? WHERE credential_id = ? AND (counter < ? OR (counter = 0 AND ? = 0)) RETURNING 1',
            newCounter,
            isoNow(),
            response.id,
            newCounter,
            newCounter,
          )
          .toArray().length > 0
      );
    };
  }
}
