import type { Env } from '../env';

/**
 * The instance's settings that Knock has of GitLab's application settings: one KV record (the
 * `TOKENS` namespace, key `settings:instance`), its only home. Read by `GET /application/settings`
 * and, for a user without a second factor, by every console page and authorization
 * (services/two-factor.ts); written by `PUT /application/settings`. KV is eventually consistent
 * once deployed: another location may read the former value for up to a minute
 * (docs/deploy.md, "Consistency once deployed").
 */
interface InstanceSettings {
  /** Every user must set up a second factor before they may use the console or authorize an application. */
  require_two_factor_authentication: boolean;
}

export const INSTANCE_SETTINGS_KEY = 'settings:instance';
const DEFAULTS: InstanceSettings = { require_two_factor_authentication: false };

export const instanceSettings = async (env: Env): Promise<InstanceSettings> => ({ ...DEFAULTS, ...(await env.TOKENS.get<Partial<InstanceSettings>>(INSTANCE_SETTINGS_KEY, 'json')) });

/** Applies `changes` and answers the settings as they now are. */
export const updateInstanceSettings = async (env: Env, changes: Partial<InstanceSettings>): Promise<InstanceSettings> => {
  const next = { ...(await instanceSettings(env)), ...Object.fromEntries(Object.entries(changes).filter(([, v]) => v !== undefined)) };
  await env.TOKENS.put(INSTANCE_SETTINGS_KEY, JSON.stringify(next));
  return next;
};
