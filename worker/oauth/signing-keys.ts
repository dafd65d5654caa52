import { importJWK, type JWK } from 'jose';
import { open } from '../auth/secret-box';
import { clock } from '../clock';
import type { Env } from '../env';
import { signingKeyPurpose, signingKeysObject, type PublishedKey } from '../durable/signing-keys/signing-keys';

/**
 * The signing keys as this isolate last read them from their object (durable/signing-keys/), for
 * at most KEY_CACHE_MS: the JWKS and every id_token are served from memory, and the object is asked
 * about once a minute per isolate. The read carries the schedule (a successor is published a day
 * before it signs), so an isolate switches to the next key on time without asking again; an
 * unscheduled rotation (`rotateNow`) reaches the isolate that made it at once and the others within
 * KEY_CACHE_MS.
 */
const KEY_CACHE_MS = 60_000;

interface KeySet {
  readAt: number;
  keys: PublishedKey[];
  /** The JWKS document (RFC 7517 §5), as text. */
  jwks: string;
}

let cached: KeySet | null = null;
let reading: Promise<KeySet> | null = null;
/** Opened private keys by kid (a key's private half never changes). */
const privateKeys = new Map<string, Promise<CryptoKey>>();

const read = async (env: Env): Promise<KeySet> => {
  const keys = await signingKeysObject(env).published();
  const set = { readAt: clock.now(), keys, jwks: JSON.stringify({ keys: keys.map((k) => k.publicJwk) }) };
  cached = set;
  return set;
};

const isFresh = (set: KeySet, now: number) => now >= set.readAt && now - set.readAt < KEY_CACHE_MS;

/** The published keys as this isolate holds them, while fresh; else null. */
export const keySetInMemory = (): KeySet | null => (cached && isFresh(cached, clock.now()) ? cached : null);

/** The published keys, from memory while fresh; one read at a time per isolate. */
export const keySet = async (env: Env): Promise<KeySet> => {
  const fresh = keySetInMemory();
  if (fresh) return fresh;
  reading ??= read(env).finally(() => {
    reading = null;
  });
  return reading;
};

/** After a rotation made here: the next read asks the object. */
export const forgetKeySet = (): void => {
  cached = null;
};

/** The key that signs now: the latest whose time has come. */
const signingNow = (set: KeySet, now: number): PublishedKey | undefined =>
  set.keys.filter((k) => k.signsFrom <= now).sort((a, b) => b.signsFrom - a.signsFrom)[0];

/** The private key of `key`, opened from its sealed JWK once per isolate. */
const privateKeyOf = (env: Env, key: PublishedKey): Promise<CryptoKey> => {
  let opened = privateKeys.get(key.kid);
  if (!opened) {
    opened = open(env, signingKeyPurpose(key.kid), key.sealedPrivateJwk).then((jwk) => {
      if (jwk === null) throw new Error(`signing key ${key.kid} does not open with this TOKEN_HASH_KEY`);
      return importJWK(JSON.parse(jwk) as JWK, 'RS256') as Promise<CryptoKey>;
    });
    opened.catch(() => privateKeys.delete(key.kid));
    if (privateKeys.size >= 16) privateKeys.clear();
    privateKeys.set(key.kid, opened);
  }
  return opened;
};

/** The key id and private key that sign an id_token now. */
export const currentSigningKey = async (env: Env): Promise<{ kid: string; key: CryptoKey }> => {
  let set = await keySet(env);
  let key = signingNow(set, clock.now());
  if (!key) {
    // Read before the object made its first key, or the clock passed every key read: ask again.
    forgetKeySet();
    set = await keySet(env);
    key = signingNow(set, clock.now());
  }
  if (!key) throw new Error('the signing keys object answered no key that signs now');
  return { kid: key.kid, key: await privateKeyOf(env, key) };
};
