import { z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import { base64url, fromBase64url, keyedHash, safeEqual } from '../auth/crypto';
import { cookieOptions } from '../auth/session';
import { tokenHashKey } from '../store/tokens';
import type { ConsoleEnv } from './viewer';

const FormAlertSchema = z.object({ form: z.string(), field: z.string().optional(), message: z.string() });
const FlashSchema = z.object({
  notice: z.string().optional(),
  alert: FormAlertSchema.optional(),
  values: z.record(z.string(), z.string()).optional(),
});

/**
 * A message for the next page, after a form's POST redirects (POST-redirect-GET): a notice that
 * it worked, or what went wrong and beside which form field, with the values to fill in again.
 */
export type Flash = z.infer<typeof FlashSchema>;

/**
 * An error of one form: `form` names the form on the page, `field` the input it is about.
 * `values` of a Flash are what the person typed (never a password or a secret), to fill it in again.
 */
export type FormAlert = z.infer<typeof FormAlertSchema>;

const FLASH_COOKIE = 'knock_flash';
/** Long enough for a redirect to be followed; the next page takes it at once. */
const FLASH_SECONDS = 60;
const MAX_VALUE = 300;
const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** Bound to this session and to the deployment's key, so no one else can plant a message. */
const seal = <E extends ConsoleEnv>(c: Context<E>, payload: string) => keyedHash(tokenHashKey(c.env), `flash:${c.var.viewer.sessionIdHash}:${payload}`);

export const setFlash = async <E extends ConsoleEnv>(c: Context<E>, flash: Flash): Promise<void> => {
  const values = Object.fromEntries(Object.entries(flash.values ?? {}).map(([k, v]) => [k, v.slice(0, MAX_VALUE)]));
  const payload = base64url(encoder.encode(JSON.stringify({ ...flash, values })));
  setCookie(c, FLASH_COOKIE, `${payload}.${await seal(c, payload)}`, cookieOptions(c, FLASH_SECONDS));
};

/** The message left by the previous POST, once: reading it deletes it. */
export const takeFlash = async <E extends ConsoleEnv>(c: Context<E>): Promise<Flash> => {
  const cookie = getCookie(c, FLASH_COOKIE);
  if (!cookie) return {};
  deleteCookie(c, FLASH_COOKIE, { path: '/' });
  const [payload, mac] = cookie.split('.');
  if (!payload || !mac || !safeEqual(mac, await seal(c, payload))) return {};
  try {
    const parsed = FlashSchema.safeParse(JSON.parse(decoder.decode(fromBase64url(payload))));
    return parsed.success ? parsed.data : {};
  } catch {
    return {};
  }
};
