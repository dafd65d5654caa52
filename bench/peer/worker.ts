// The peer: the same job (authorization code + refresh + a token-checked API call) done with
// `@cloudflare/workers-oauth-provider`, run beside Knock in the same runtime. Used only by the
// bench. The authorize endpoint approves at once for the user named in `login_hint`, so the bench
// can get codes without pages; everything the bench measures (token endpoint, API token check) is
// the library's own code.
import { OAuthProvider, type OAuthHelpers } from '@cloudflare/workers-oauth-provider';

interface Env {
  OAUTH_KV: KVNamespace;
  OAUTH_PROVIDER: OAuthHelpers;
}

interface Props {
  userId: number;
  username: string;
  name: string;
}

const apiHandler = {
  async fetch(_request: Request, _env: Env, ctx: ExecutionContext) {
    const { userId, username, name } = ctx.props as Props;
    return Response.json({ id: userId, username, name, state: 'active' });
  },
};

const defaultHandler = {
  async fetch(request: Request, env: Env) {
    const url = new URL(request.url);
    if (url.pathname !== '/authorize') return new Response('Not found', { status: 404 });
    const authRequest = await env.OAUTH_PROVIDER.parseAuthRequest(request);
    const username = url.searchParams.get('login_hint') ?? 'bench';
    const userId = Number(/([0-9]+)$/.exec(username)?.[1] ?? 1);
    const { redirectTo } = await env.OAUTH_PROVIDER.completeAuthorization({
      request: authRequest,
      userId: username,
      metadata: {},
      scope: authRequest.scope,
      props: { userId, username, name: `Peer ${username}` } satisfies Props,
    });
    return Response.redirect(redirectTo, 302);
  },
};

// The resource must name this Worker's own origin, which is only known from the first request.
let provider: OAuthProvider<Env> | null = null;
const providerFor = (origin: string) =>
  (provider ??= new OAuthProvider<Env>({
    apiRoute: '/api/',
    apiHandler,
    defaultHandler,
    authorizeEndpoint: '/authorize',
    tokenEndpoint: '/token',
    clientRegistrationEndpoint: '/register',
    scopesSupported: ['api'],
    resourceMetadata: { resource: `${origin}/api/` },
    // The bench provokes no errors on purpose; do not log each one.
    onError: () => undefined,
  }));

export default {
  fetch(request: Request, env: Env, ctx: ExecutionContext) {
    return providerFor(new URL(request.url).origin).fetch(request, env, ctx);
  },
};
