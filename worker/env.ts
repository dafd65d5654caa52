import type { Directory } from './durable/directory';
import type { Grants } from './durable/grants';
import type { Namespace } from './durable/namespace';

/** Bindings from wrangler.toml and secrets (.dev.vars locally). */
export interface Env {
  TOKENS: KVNamespace;
  DIRECTORY: DurableObjectNamespace<Directory>;
  GRANTS: DurableObjectNamespace<Grants>;
  NAMESPACES: DurableObjectNamespace<Namespace>;
  CLIENT_HOLDERS: DurableObjectNamespace<import('./durable/client-holders').ClientHolders>;
  ADMIN_TOKEN?: string;
  TOKEN_HASH_KEY?: string;
  PUBLIC_URL?: string;
  ACCESS_TOKEN_TTL_SECONDS?: string;
  CODE_TTL_SECONDS?: string;
  REFRESH_TOKEN_TTL_SECONDS?: string;
  SIGNUP_ENABLED?: string;
  EXTENSION_REDIRECT_URIS?: string;
}

/** The authenticated caller of /api/v4, as the token store knows it. */
export interface Caller {
  id: number;
  username: string;
  name: string;
  admin: boolean;
  scopes: string[];
  /** OAuth client the token was issued to; null for the bootstrap admin token. */
  clientId: string | null;
  /** The caller's profile as recorded with the token, when it was (see AccessTokenRecord). */
  profile?: { email: string | null; createdAt: string };
}

export type AppEnv = {
  Bindings: Env;
  Variables: {
    caller: Caller;
    /** Signed-in user of the HTML pages, if any. */
    session: import('./auth/session').Session | null;
  };
};
