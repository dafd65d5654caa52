import type { Context } from 'hono';
import { problems, raise } from '../errors';

/** Each request's parameters, read once: the token endpoint's address limit reads them before its handler (routes.ts). */
const read = new WeakMap<Request, Promise<Readonly<Record<string, string>>>>();

/**
 * The parameters of a call to the token, revocation or introspection endpoint: a form body
 * (RFC 6749 §3.2) or, as GitLab's clients also send it, a JSON object. Empty values count as absent (§3.1);
 * a parameter sent twice is refused (§3.1). Other content types are 415. A body that cannot be
 * read is refused the same way each time it is asked for.
 */
export const readOAuthParams = (c: Context): Promise<Readonly<Record<string, string>>> => {
  let params = read.get(c.req.raw);
  if (!params) {
    params = parseParams(c);
    read.set(c.req.raw, params);
  }
  return params;
};

const parseParams = async (c: Context): Promise<Record<string, string>> => {
  const contentType = (c.req.header('content-type') ?? '').split(';')[0].trim().toLowerCase();
  if (contentType === 'application/json' || contentType.endsWith('+json')) return fromJson(await c.req.text());
  // Parsed here rather than through FormData: the token endpoint's hot path (refresh) is this.
  if (contentType === 'application/x-www-form-urlencoded') return fromEntries(formFields(new TextDecoder().decode(await c.req.arrayBuffer())));
  if (contentType === 'multipart/form-data') {
    let body: Record<string, unknown>;
    try {
      body = await c.req.parseBody({ all: true });
    } catch {
      return raise(problems.oauth('invalid_request', 'The request body could not be read.'));
    }
    return fromEntries(body);
  }
  if (!contentType && !(await c.req.text())) return {};
  return raise(
    problems.oauth('invalid_request', 'Unsupported content type: send application/x-www-form-urlencoded or application/json.', 415),
  );
};

const fromJson = (text: string): Record<string, string> => {
  let parsed: unknown;
  try {
    parsed = text.trim() ? JSON.parse(text) : {};
  } catch {
    return raise(problems.oauth('invalid_request', 'The request body is not valid JSON.'));
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) {
    return raise(problems.oauth('invalid_request', 'The request body must be a JSON object.'));
  }
  return fromEntries(parsed as Record<string, unknown>);
};

/** The fields of a form-encoded body; a field sent twice becomes a list (which fromEntries refuses). */
const formFields = (text: string): Record<string, string | string[]> => {
  const fields = new Map<string, string | string[]>();
  for (const [name, value] of new URLSearchParams(text)) {
    const seen = fields.get(name);
    fields.set(name, seen === undefined ? value : [...[seen].flat(), value]);
  }
  return Object.fromEntries(fields);
};

const fromEntries = (body: Record<string, unknown>): Record<string, string> => {
  const params: Record<string, string> = {};
  for (const [name, value] of Object.entries(body)) {
    if (value === null || value === undefined || value === '') continue;
    if (Array.isArray(value)) return raise(problems.oauth('invalid_request', `${name} was sent more than once.`));
    if (typeof value !== 'string') return raise(problems.oauth('invalid_request', `${name} must be a string.`));
    params[name] = value;
  }
  return params;
};
