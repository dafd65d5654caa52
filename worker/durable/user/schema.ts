/**
 * The tables of one user's `User` object, as one baseline: nothing has been released, so there
 * is no earlier state to upgrade. A later release appends a step to this list and never edits one
 * that shipped (docs/deploy.md, "Changing a schema"). Codes, refresh tokens and sessions are
 * stored only as keyed hashes.
 *
 * - `indexed_clients`: applications whose `ClientHolders` object already lists this user.
 * - `token_pairs`: one row per issued access/refresh token pair (state: active | rotated |
 *   revoked). A rotated row keeps, for 30 seconds, the two tokens of the answer it was rotated
 *   with, encrypted under a key derived from its own refresh token (which storage never holds), for
 *   the identical-retry rule; the rest of that answer is its successor's row.
 * - `user_state`: the user as the Directory last told this object (pushed with every change to the
 *   users row, forward-only by its version; asked once when never told): whether refreshes and
 *   code exchanges may go on, and the profile that access tokens' KV records carry.
 *   `synced_version`: the version whose profile (or, for an inactive user, tombstones) every live
 *   access token in KV is known to carry.
 * - `sessions`: the user's browser sessions, under the keyed hash of the session cookie, with the
 *   version of the user they were started under, so a new password ends exactly the sessions begun
 *   before it.
 * - `deleted_clients`: applications deleted while this user held grants for them: no code is
 *   issued for one again, so an isolate that still has the registration cached cannot start a new
 *   grant for it.
 * - `index_partitions`: the index partitions (index-partition.ts) holding rows of this user (a
 *   membership, a request, so an inbox), added by a partition before the change that gave the user
 *   their first row there answers; it only grows. A user's inbox and own requests are read from
 *   these partitions alone.
 *
 * A code, and the grant it starts, keep what its id_tokens say of the sign-in (OpenID Connect Core
 * 1.0 §2): the `nonce` the authorization request sent, the session's sign-in time (`auth_time`,
 * epoch seconds) and the session's `sid` (worker/protocol/session-id.ts). A token pair granted
 * `openid` keeps the group claims read when it was issued (JSON), which its access token's KV
 * record carries; `claims_lost` once its application was logged out because the user lost one
 * of them (user.ts `checkGroupClaims`). A grant keeps the issuer its id_tokens named (`issuer`), for its logout tokens.
 *
 * - `logout_outbox`: back-channel logouts queued in the transaction that ended access (logouts.ts),
 *   until the application's `ClientHolders` object has them.
 * - `tombstone_outbox`: access tokens ended (a grant revoked, a pair rotated), queued in the
 *   transaction that ended them, until KV has their tombstones (tombstones.ts).
 */
export const USER_SCHEMA = [
  `CREATE TABLE consents (
     client_id TEXT NOT NULL,
     scopes TEXT NOT NULL,
     created_at TEXT NOT NULL,
     PRIMARY KEY (client_id, scopes)
   );
   CREATE TABLE indexed_clients (
     client_id TEXT PRIMARY KEY
   );
   CREATE TABLE codes (
     hash TEXT PRIMARY KEY,
     client_id TEXT NOT NULL,
     user_id INTEGER NOT NULL,
     -- The redirect_uri the authorization request named, NULL when it named none: the exchange
     -- must send the same (RFC 6749 §4.1.3).
     redirect_uri TEXT,
     scopes TEXT NOT NULL,
     code_challenge TEXT,
     expires_at INTEGER NOT NULL,
     grant_id TEXT,
     nonce TEXT,
     auth_time INTEGER,
     sid TEXT
   );
   CREATE INDEX codes_expiry ON codes (expires_at);
   CREATE TABLE grants (
     id TEXT PRIMARY KEY,
     client_id TEXT NOT NULL,
     user_id INTEGER NOT NULL,
     scopes TEXT NOT NULL,
     created_at TEXT NOT NULL,
     revoked_at TEXT,
     auth_time INTEGER,
     sid TEXT,
     issuer TEXT NOT NULL
   );
   CREATE INDEX grants_client ON grants (client_id);
   CREATE TABLE logout_outbox (
     jti TEXT PRIMARY KEY,
     client_id TEXT NOT NULL,
     sid TEXT,
     issuer TEXT NOT NULL,
     reason TEXT NOT NULL
   );
   CREATE TABLE tombstone_outbox (
     access_hash TEXT PRIMARY KEY,
     expires_at INTEGER NOT NULL
   );
   CREATE TABLE token_pairs (
     refresh_hash TEXT PRIMARY KEY,
     grant_id TEXT NOT NULL,
     access_hash TEXT NOT NULL,
     access_expires_at INTEGER NOT NULL,
     refresh_expires_at INTEGER NOT NULL,
     scopes TEXT NOT NULL,
     created_at INTEGER NOT NULL,
     state TEXT NOT NULL,
     successor_hash TEXT,
     retry_request TEXT,
     retry_response BLOB,
     retry_until INTEGER,
     groups TEXT,
     claims_lost INTEGER NOT NULL DEFAULT 0
   );
   -- A grant's pairs; with the access token's hash, the one an inbox poll names (rows.ts liveAccessToken).
   CREATE INDEX token_pairs_grant ON token_pairs (grant_id, access_hash);
   CREATE INDEX token_pairs_expiry ON token_pairs (refresh_expires_at);
   -- The user's owners' inbox (inbox.ts): each index partition's share of the pending requests
   -- there the user may act on (inbox_shares: the partition's version last taken), one row per request with
   -- the names shown and the memberships the user's standing rests on (grants, JSON; access_level
   -- and until are its first: the level shown and when it next changes); inbox_version: the ETag.
   CREATE TABLE inbox_shares (
     partition INTEGER PRIMARY KEY,
     version INTEGER NOT NULL
   );
   CREATE TABLE inbox (
     namespace_id INTEGER NOT NULL,
     user_id INTEGER NOT NULL,
     partition INTEGER NOT NULL,
     requested_at TEXT NOT NULL,
     kind TEXT NOT NULL,
     source_name TEXT NOT NULL,
     source_full_path TEXT NOT NULL,
     username TEXT NOT NULL,
     name TEXT NOT NULL,
     grants TEXT NOT NULL,
     access_level INTEGER NOT NULL,
     until TEXT,
     details TEXT,
     PRIMARY KEY (namespace_id, user_id)
   ) WITHOUT ROWID;
   CREATE INDEX inbox_order ON inbox (requested_at, namespace_id, user_id);
   CREATE INDEX inbox_partition ON inbox (partition);
   CREATE INDEX inbox_due ON inbox (until) WHERE until IS NOT NULL;
   CREATE TABLE inbox_version (
     singleton INTEGER PRIMARY KEY CHECK (singleton = 1),
     version INTEGER NOT NULL
   );
   CREATE TABLE user_state (
     singleton INTEGER PRIMARY KEY CHECK (singleton = 1),
     snapshot TEXT NOT NULL,
     version INTEGER NOT NULL,
     synced_version INTEGER NOT NULL DEFAULT 0
   );
   CREATE TABLE sessions (
     id_hash TEXT PRIMARY KEY,
     csrf_token TEXT NOT NULL,
     created_at TEXT NOT NULL,
     expires_at INTEGER NOT NULL,
     user_version INTEGER NOT NULL
   );
   CREATE INDEX sessions_expiry ON sessions (expires_at);
   CREATE TABLE deleted_clients (
     client_id TEXT PRIMARY KEY
   );
   CREATE TABLE index_partitions (
     partition INTEGER PRIMARY KEY
   );
   -- The second factor (two-factor.ts). totp: the secret sealed (auth/secret-box.ts), whether
   -- the user confirmed it with a code (until then a pending enrolment), and the last step a code
   -- was accepted for (RFC 6238 §5.2: never twice). passkeys: WebAuthn credentials (id and COSE
   -- public key base64url, signature counter). recovery_codes: keyed hashes, each deleted when used.
   -- webauthn_challenges: the challenge of a registration (purpose 'register') or of a sign-in's
   -- second step (purpose: that step's hash), until it expires. second_steps: a sign-in whose
   -- password was right, waiting for the second factor, under the keyed hash of its cookie.
   -- two_factor_flag: whether the user has a second factor, as last told to the Directory
   -- (pushed = 0: still to tell; the alarm retries).
   CREATE TABLE totp (
     singleton INTEGER PRIMARY KEY CHECK (singleton = 1),
     sealed_secret TEXT NOT NULL,
     confirmed INTEGER NOT NULL DEFAULT 0,
     last_step INTEGER
   );
   CREATE TABLE passkeys (
     credential_id TEXT PRIMARY KEY,
     name TEXT NOT NULL,
     public_key TEXT NOT NULL,
     counter INTEGER NOT NULL,
     transports TEXT NOT NULL,
     created_at TEXT NOT NULL,
     last_used_at TEXT
   );
   CREATE TABLE recovery_codes (
     hash TEXT PRIMARY KEY
   );
   CREATE TABLE webauthn_challenges (
     purpose TEXT PRIMARY KEY,
     challenge TEXT NOT NULL,
     expires_at INTEGER NOT NULL
   );
   CREATE TABLE second_steps (
     id_hash TEXT PRIMARY KEY,
     return_to TEXT NOT NULL,
     expires_at INTEGER NOT NULL,
     failures INTEGER NOT NULL DEFAULT 0
   );
   CREATE TABLE two_factor_flag (
     singleton INTEGER PRIMARY KEY CHECK (singleton = 1),
     enabled INTEGER NOT NULL,
     pushed INTEGER NOT NULL
   );`,
];
