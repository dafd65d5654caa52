import type { Context } from 'hono';
import { config } from '../config';
import type { Env } from '../env';

/**
 * The client's address, from the one request header that what stands in front of the Worker sets
 * (`CLIENT_ADDRESS_HEADER`): on Cloudflare `CF-Connecting-IP`, which the edge writes over any a
 * client sent. Null when none is configured (a self-hosted workerd reached directly, `npm start`)
 * or the request lacks it: an address the client wrote itself is believed by no limit or
 * throttle, as a client would send a new one with every guess.
 */
export const clientAddress = <E extends { Bindings: Env }>(c: Context<E>): string | null => {
  const header = config(c.env).clientAddressHeader;
  return (header && c.req.header(header)?.trim()) || null;
};
