/**
 * Bindings, variables and secrets, as `wrangler types` generates them from wrangler.toml into
 * worker-configuration.d.ts (`npm run typecheck` fails when that file is out of date). Secrets
 * are typed as possibly absent: a deployment may lack them until `wrangler secret put`, and
 * worker/secrets.ts answers 503 then.
 */
export type Env = Omit<Cloudflare.Env, Secret> & Partial<Pick<Cloudflare.Env, Secret>>;
type Secret = 'ADMIN_TOKEN' | 'TOKEN_HASH_KEY';

/** The authenticated caller of /api/v4, as the token store knows it. */
export interface Caller {
  id: number;
  username: string;
  name: string;
  admin: boolean;
  scopes: string[];
  /** The OAuth grant of the access token presented; null for other tokens. */
  grantId: string | null;
  /** The personal access token or impersonation token presented (its id); null for OAuth tokens and the admin token. */
  tokenId: number | null;
  /** The caller's profile as recorded with the token. */
  profile: { email: string | null; createdAt: string; twoFactorEnabled: boolean };
}

/** Routes that need nothing but the bindings. */
export type BaseEnv = { Bindings: Env };

/** /api/v4 behind authentication: every handler has its caller. */
export type ApiEnv = { Bindings: Env; Variables: { caller: Caller } };
