import type { Context } from 'hono';

/**
 * A submitted form's fields, or none when the body cannot be read as a form (a multipart body
 * without its boundary, say): the form's CSRF check then refuses it, instead of a 500.
 */
export const readForm = async (c: Context, opts: { all?: boolean } = {}): Promise<Record<string, string | File | (string | File)[]>> => {
  try {
    return await c.req.parseBody({ all: opts.all ?? false });
  } catch {
    return {};
  }
};
