import type { Context } from 'hono';
import { epochSeconds } from '../clock';
import { publicOrigin } from '../config';
import { deviceAuthorizations, partitionOfUserCode } from '../durable/device-authorizations/device-authorizations';
import { partitionCount } from '../durable/partitions';
import { unwrap, type Result } from '../durable/result';
import type { Issued } from '../durable/user/contract';
import { userObject } from '../durable/user/user';
import { enforceLimit, LIMITS } from '../edge/rate-limits';
import type { BaseEnv, Env } from '../env';
import { json, problems, raise } from '../errors';
import { DEVICE_FLOW, formatUserCode, newDeviceCode, newUserCode, partitionOfDeviceCode } from '../protocol/device-codes';
import { NO_STORE } from '../protocol/token-response';
import { hashSecret } from '../store/tokens';
import { authenticateClient } from './client-auth';
import { isPublicClient, type OAuthClient } from '../services/clients';
import { DEVICE_VERIFICATION_PATH } from './provider';
import { readOAuthParams } from './request-params';
import { isKnownScope, parseScopes } from './scopes';

/** A user code is drawn again when its partition already has it (about one in 10^10 at a thousand live codes). */
const DRAWS = 3;

/**
 * `POST /oauth/authorize_device` (GitLab's path) and `POST /login/oauth/authorize_device`: RFC
 * 8628 §3.1 and §3.2. The client authenticates as at the token endpoint (a public client names
 * itself); `scope` defaults to the application's scopes, as at the authorization endpoint.
 */
export const deviceAuthorizationEndpoint = async (c: Context<BaseEnv>) => {
  const params = await readOAuthParams(c);
  const client = await authenticateClient(c, params, { cached: true });
  if (!isPublicClient(client)) await enforceLimit(c.env, LIMITS.oauthClient, client.clientId);
  const scopes = params.scope !== undefined ? parseScopes(params.scope) : client.scopes;
  if (scopes.length === 0 || !scopes.every(isKnownScope)) return raise(problems.oauth('invalid_scope', 'The requested scope is unknown.'));
  if (!scopes.every((s) => client.scopes.includes(s))) return raise(problems.oauth('invalid_scope', 'The requested scope is not allowed for this application.'));

  for (let draw = 0; draw < DRAWS; draw++) {
    const userCode = newUserCode();
    const partition = partitionOfUserCode(c.env, userCode);
    const deviceCode = newDeviceCode(partition);
    const [deviceHash, userCodeHash] = await Promise.all([hashSecret(c.env, deviceCode), hashSecret(c.env, userCode)]);
    const started = await deviceAuthorizations(c.env, partition).start({
      deviceHash,
      userCodeHash,
      clientId: client.clientId,
      scopes,
      expiresAt: epochSeconds() + DEVICE_FLOW.expiresInSeconds,
    });
    if (!started) continue;
    const verification = `${publicOrigin(c.env, c.req.url)}${DEVICE_VERIFICATION_PATH}`;
    const shown = formatUserCode(userCode);
    return json(
      {
        device_code: deviceCode,
        user_code: shown,
        verification_uri: verification,
        verification_uri_complete: `${verification}?${new URLSearchParams({ user_code: shown })}`,
        expires_in: DEVICE_FLOW.expiresInSeconds,
        interval: DEVICE_FLOW.intervalSeconds,
      },
      200,
      NO_STORE,
    );
  }
  return raise(problems.oauth('temporarily_unavailable', 'No free user code was found; try again.', 503));
};

/**
 * The device access token request (RFC 8628 §3.4): the poll, judged by the authorization's owner;
 * once approved, the approval's authorization code redeemed in the user's `User` object, as the
 * code flow's exchange is (one grant, the same tokens and id_token). The code never went through a
 * browser's redirect, which is what PKCE protects (RFC 7636 §1): the device code, which only the
 * polling client holds, stands for it.
 */
export const redeemDeviceCode = async (env: Env, client: OAuthClient, deviceCode: string, issuer: string): Promise<Result<Issued>> => {
  const partition = partitionOfDeviceCode(deviceCode, partitionCount(env));
  if (partition === null) return raise(problems.oauth('invalid_grant', 'The device code is invalid.'));
  const authorizations = deviceAuthorizations(env, partition);
  const deviceHash = await hashSecret(env, deviceCode);
  const approved = unwrap(await authorizations.poll(deviceHash, client.clientId));
  try {
    return await userObject(env, approved.userId).redeemCode({
      userId: approved.userId,
      code: approved.code,
      clientId: client.clientId,
      publicClient: false,
      redirectUri: null,
      codeVerifier: null,
      issuer,
    });
  } catch (e) {
    // The call failed (its rules answer a Result): the approval goes to the next poll, not lost.
    await authorizations.release(deviceHash).catch(() => undefined);
    throw e;
  }
};
