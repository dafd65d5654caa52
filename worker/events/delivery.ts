import { KNOCK_VERSION } from '../../shared/version';
import { base64, fromBase64, hmacSha256WithKey, randomBytes } from '../auth/crypto';
import { clock } from '../clock';
import { readCappedText } from './capped-body';
import { checkDestination, type DestinationPolicy } from './url-guard';

/**
 * One HTTP attempt to deliver a webhook, with the headers of both worlds: GitLab's
 * (`X-Gitlab-Event`, `X-Gitlab-Token`, `X-Gitlab-Event-UUID`, `X-Gitlab-Webhook-UUID`,
 * `X-Gitlab-Instance`, `Idempotency-Key`) and Standard Webhooks' (`webhook-id`,
 * `webhook-timestamp`, `webhook-signature`), so a receiver written for either works unchanged.
 * Never follows a redirect, gives up after 10 seconds, and reads at most a few kilobytes back.
 */

/**
 * The one source of outbound HTTP for webhooks, and of the signal that ends an attempt after `ms`.
 * Tests replace `outbound.fetch` to be the receiver, and `outbound.timeout` to fire a timeout
 * without waiting for it.
 */
export const outbound = {
  fetch: (request: Request): Promise<Response> => fetch(request),
  timeout: (ms: number): AbortSignal => AbortSignal.timeout(ms),
};

const DELIVERY_TIMEOUT_MS = 10_000;
/** How much of a response body is read, and kept in the delivery log. */
const RESPONSE_EXCERPT_BYTES = 2048;

/** Standard Webhooks' secret: `whsec_` and base64 of 32 random bytes. */
export const newSigningSecret = (): string => `whsec_${base64(randomBytes(32))}`;

/**
 * Standard Webhooks' signature: `v1,` and base64 of HMAC-SHA-256 over `id.timestamp.body`,
 * keyed with the bytes the secret's base64 part (after `whsec_`) encodes.
 */
const sign = async (secret: string, id: string, timestamp: number, body: string): Promise<string> =>
  `v1,${base64(await hmacSha256WithKey(fromBase64(secret.replace(/^whsec_/, '')), `${id}.${timestamp}.${body}`))}`;

/** Where and how a hook is reached, its secrets opened. */
interface Destination {
  url: string;
  /** The hook's `X-Gitlab-Webhook-UUID`. */
  uuid: string;
  token: string | null;
  signingSecret: string;
  /** This Knock's public origin, GitLab's `X-Gitlab-Instance`. */
  instance: string;
}

/** What is sent: the event's id (stable across retries and resends) and its body. */
export interface Message {
  id: string;
  body: string;
}

export interface AttemptResult {
  ok: boolean;
  /** The response's status; null when there was no response (refused, timed out, blocked). */
  status: number | null;
  /** The request's headers, the secret token redacted. */
  requestHeaders: Record<string, string>;
  responseHeaders: Record<string, string>;
  responseBody: string;
  durationMs: number;
  /** Why there was no response, or why a response counts as a failure. */
  error: string | null;
}

/** An attempt that sent nothing (it could not be made). */
export const notSent = (error: string, requestHeaders: Record<string, string> = {}, durationMs = 0): AttemptResult => ({
  ok: false,
  status: null,
  requestHeaders,
  responseHeaders: {},
  responseBody: '',
  durationMs,
  error,
});

/** Sends `message` to `to` once. A 2xx answer is a success; anything else, or none, a failure. */
export const attempt = async (to: Destination, message: Message, policy: DestinationPolicy): Promise<AttemptResult> => {
  const timestamp = Math.floor(clock.now() / 1000);
  const headers: Record<string, string> = {
    'Content-Type': 'application/json',
    'User-Agent': `Knock/${KNOCK_VERSION}`,
    'Idempotency-Key': message.id,
    'X-Gitlab-Event': 'Member Hook',
    'X-Gitlab-Event-UUID': message.id,
    'X-Gitlab-Webhook-UUID': to.uuid,
    'X-Gitlab-Instance': to.instance,
    'webhook-id': message.id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': await sign(to.signingSecret, message.id, timestamp, message.body),
  };
  const requestHeaders = to.token === null ? { ...headers } : { ...headers, 'X-Gitlab-Token': '[REDACTED]' };
  if (to.token !== null) headers['X-Gitlab-Token'] = to.token;
  return post(to.url, headers, message.body, policy, requestHeaders);
};

/**
 * The one outbound POST of Knock's deliveries (webhooks, back-channel logout tokens): the URL
 * guard first (`Url is blocked: …`), no redirect followed, a 10-second limit, at most a few
 * kilobytes of the answer read. A 2xx answer is a success. `logged`: the request's headers as the
 * log may show them (secrets redacted).
 */
export const post = async (url: string, headers: Record<string, string>, body: string, policy: DestinationPolicy, logged: Record<string, string> = headers): Promise<AttemptResult> => {
  const requestHeaders = { ...logged };
  const blocked = await checkDestination(url, policy);
  if (blocked) return notSent(`Url is blocked: ${blocked}`, requestHeaders);
  const started = performance.now();
  try {
    const response = await outbound.fetch(new Request(url, { method: 'POST', headers, body, redirect: 'manual', signal: outbound.timeout(DELIVERY_TIMEOUT_MS) }));
    const responseBody = await readCappedText(response, RESPONSE_EXCERPT_BYTES);
    const ok = response.status >= 200 && response.status < 300;
    return {
      ok,
      status: response.status,
      requestHeaders,
      responseHeaders: Object.fromEntries(response.headers),
      responseBody,
      durationMs: performance.now() - started,
      error: ok ? null : response.status >= 300 && response.status < 400 ? 'Redirects are not followed' : null,
    };
  } catch (e) {
    const timedOut = e instanceof Error && (e.name === 'TimeoutError' || e.name === 'AbortError');
    const why = timedOut ? `No response within ${DELIVERY_TIMEOUT_MS / 1000} seconds` : `Connection failed: ${e instanceof Error ? e.message : String(e)}`;
    return notSent(why, requestHeaders, performance.now() - started);
  }
};
