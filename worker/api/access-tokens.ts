import { z } from '@hono/zod-openapi';
import { epochSeconds, todayUtc } from '../clock';
import { dateOf, startOfDay } from '../dates';
import { directory } from '../durable/directory/directory';
import type { Env } from '../env';
import { problems, raise } from '../errors';
import { isTokenScope, parseScopes } from '../oauth/scopes';
import * as tokens from '../services/access-tokens';
import { dateParam } from './params';

/**
 * What creating a personal access token or an impersonation token takes (GitLab's `name`,
 * `scopes` as an array or a comma- or space-separated string, `expires_at`), and how it is issued:
 * written once for both kinds of token and each route that creates one.
 */
export const NewAccessTokenBody = z
  .object({
    name: z.string().trim().min(1).max(255),
    scopes: z
      .preprocess((v) => (typeof v === 'string' ? parseScopes(v) : v), z.array(z.string()))
      .transform((v) => [...new Set(v)])
      .refine((s) => s.length > 0 && s.every(isTokenScope), { message: 'does not have a valid value' }),
    expires_at: dateParam().optional(),
  })
  .openapi('NewAccessToken');

const DAY = 24 * 3600;

/**
 * When a token asked to expire on `date` stops: 00:00 UTC that day, which must be after today (a
 * token ending today would never work) and at most 365 days ahead; without a date, the kind's
 * default lifetime.
 */
const expiryOf = (kind: tokens.TokenKind, date: string | undefined): number => {
  const now = epochSeconds();
  if (date === undefined) return now + kind.defaultLifetimeDays * DAY;
  if (date <= todayUtc()) raise(problems.pastDate());
  const at = startOfDay(date) / 1000;
  const latest = dateOf((now + tokens.MAX_LIFETIME_DAYS * DAY) * 1000);
  return at > now + tokens.MAX_LIFETIME_DAYS * DAY ? raise(problems.badRequest({ expires_at: [`must be on or before ${latest}`] })) : at;
};

/** Issues a token of `kind` for an active user, or `404 User Not Found`. */
export const issueTokenFor = async (env: Env, userId: number, kind: tokens.TokenKind, input: z.infer<typeof NewAccessTokenBody>) => {
  const expiresAt = expiryOf(kind, input.expires_at);
  const user = await directory(env).getUser(userId);
  if (!user || user.state !== 'active') return raise(problems.notFound('User'));
  return tokens.issueAccessToken(env, user, kind, { name: input.name, scopes: input.scopes, expiresAt });
};
