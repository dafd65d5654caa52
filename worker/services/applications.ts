import { hex, randomBytes, randomToken } from '../auth/crypto';
import { clientHoldersOf } from '../durable/client-holders/client-holders';
import { directory } from '../durable/directory/directory';
import { config } from '../config';
import type { Env } from '../env';
import { checkDestination } from '../events/url-guard';
import { problems, raise } from '../errors';
import { forgetClient } from './clients';
import { hashSecret } from '../store/tokens';

/** OAuth applications (GitLab's applications API): what the API's routes and the administrators' pages do. */

/** The prefix of client secrets (so a leaked one is recognisable, as GitLab's `gloas-`). */
const CLIENT_SECRET_PREFIX = 'knock_cs_';

/** An application to register, as the API's `POST /applications` and the administrators' page validate it. */
interface NewApplication {
  name: string;
  redirect_uri: string[];
  scopes: string[];
  confidential: boolean;
  backchannel_logout_uri: string | null;
  post_logout_redirect_uris: string[];
}

/** Registers an OAuth application; its secret (none for a public client) is returned this once. */
export const registerApplication = async (env: Env, input: NewApplication) => {
  if (input.backchannel_logout_uri !== null) {
    // The URL guard of webhooks (GitLab's wording), as a hook's URL is checked when it is saved.
    const reason = await checkDestination(input.backchannel_logout_uri, config(env));
    if (reason) raise(problems.badRequest({ backchannel_logout_uri: [`is blocked: ${reason}`] }));
  }
  const secret = input.confidential ? randomToken(CLIENT_SECRET_PREFIX) : null;
  const application = await directory(env).createApplication({
    clientId: hex(randomBytes(32)),
    secretHash: secret ? await hashSecret(env, secret) : null,
    name: input.name,
    redirectUris: input.redirect_uri,
    scopes: input.scopes,
    confidential: input.confidential,
    backchannelLogoutUri: input.backchannel_logout_uri,
    postLogoutRedirectUris: input.post_logout_redirect_uris,
  });
  return { application, secret };
};

/**
 * Deletes an application and ends every grant made to it, or raises `404 Application Not Found`.
 * The application's own object forgets it first, so no code is exchanged for it from then on,
 * whatever happens after; a failure before the Directory's row goes leaves it listed, and
 * repeating the deletion finishes it.
 */
export const deleteApplication = async (env: Env, id: number): Promise<void> => {
  const dir = directory(env);
  const clientId = (await dir.applicationClientId(id)) ?? raise(problems.notFound('Application'));
  await clientHoldersOf(env, clientId).forgetApplication(clientId);
  if (!(await dir.deleteApplication(id))) return raise(problems.notFound('Application'));
  // This isolate forgets it at once (others within their cache's minute), and every grant made to it ends.
  forgetClient(clientId);
  await clientHoldersOf(env, clientId).endGrants();
};


/** The back-channel logout deliveries of an application (its `ClientHolders` object's log), or `404 Application Not Found`. */
export const logoutDeliveries = async (env: Env, id: number, window: { offset: number; limit: number }) => {
  const clientId = (await directory(env).applicationClientId(id)) ?? raise(problems.notFound('Application'));
  return clientHoldersOf(env, clientId).logoutLog(window.offset, window.limit);
};
