/**
 * The signing keys of the deployment's id_tokens (`SigningKeys`, one object named `keys`). A key's
 * private half is stored only sealed (worker/auth/secret-box.ts, bound to its `kid`); its public
 * half is what the JWKS publishes. Times are milliseconds since the epoch. A key signs from
 * `signs_from` until the next key's `signs_from`; it is published from its creation until
 * `published_until` (null while no successor is decided), then deleted.
 */
export const signingKeysMigrations = [
  `CREATE TABLE keys (
     kid TEXT PRIMARY KEY,
     public_jwk TEXT NOT NULL,
     sealed_private_jwk TEXT NOT NULL,
     signs_from INTEGER NOT NULL,
     published_until INTEGER
   );
   CREATE INDEX keys_signs_from ON keys (signs_from);`,
];
