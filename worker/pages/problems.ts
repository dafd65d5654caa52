import { ApiError } from '../errors';

/** An error as a person reads it beside a form: which field it is about, and what to do. */
interface Described {
  field?: string;
  message: string;
}

/** Field names of the API's error bodies, as the console's forms label them. */
const LABELS: Record<string, string> = {
  access_level: 'Access level',
  expires_at: 'Expiry date',
  user_id: 'User',
  username: 'Username',
  name: 'Name',
  email: 'Email',
  password: 'Password',
  path: 'Path',
  visibility: 'Visibility',
  visibility_level: 'Visibility',
  redirect_uri: 'Redirect URIs',
  backchannel_logout_uri: 'Back-channel logout URI',
  post_logout_redirect_uris: 'Post-logout redirect URIs',
  scopes: 'Scopes',
  url: 'URL',
  token: 'Secret token',
};
/** The form field an error body's key is about (GitLab says `visibility_level`; the form's field is `visibility`). */
const FIELDS: Record<string, string> = { visibility_level: 'visibility' };

const sentence = (s: string) => {
  const t = s.trim();
  const capital = t.charAt(0).toUpperCase() + t.slice(1);
  return /[.!?]$/.test(capital) ? capital : `${capital}.`;
};

const fieldMessage = (key: string, message: string): Described => {
  const label = LABELS[key] ?? key;
  // "public is not allowed since …" reads as a whole sentence already.
  const text = /^(is|does|cannot|has|must|should|can't|already)\b/.test(message) ? `${label} ${message}` : message;
  return { field: FIELDS[key] ?? key, message: sentence(text) };
};

/**
 * What an error a service raised (GitLab's error bodies, `worker/errors.ts`) says to a person:
 * `{"message":{"path":["has already been taken"]}}` → "Path has already been taken." beside the
 * path field; `{"error":"expires_at is invalid"}` → "Expiry date is invalid."; "403 Forbidden - A
 * group must have at least one owner" → "A group must have at least one owner.". `notFound` says
 * what a bare "404 Not found" means on the form at hand.
 */
export const describeProblem = (e: ApiError, notFound = 'It is no longer there: someone may have changed it meanwhile.'): Described => {
  const { message, error } = e.body;
  if (message !== undefined && typeof message === 'object') {
    const [key, messages] = Object.entries(message)[0] ?? ['', []];
    return fieldMessage(key, messages[0] ?? 'is invalid');
  }
  const text = typeof message === 'string' ? message : typeof error === 'string' ? error : String(e.status);
  const param = /^([a-z_]+) (is missing|is invalid|does not have a valid value)$/.exec(text);
  if (param) return fieldMessage(param[1], param[2]);
  const taken = /^(Username|Email) has already been taken$/.exec(text);
  if (taken) return { field: taken[1].toLowerCase(), message: sentence(text) };
  // GitLab's refusal of a webhook URL (SSRF guard), in its own words, beside the URL.
  if (text.startsWith('Url is blocked: ')) return { field: 'url', message: sentence(text) };
  if (text === '404 Not found') return { message: notFound };
  if (text === '403 Forbidden') return { message: 'You are not allowed to do that.' };
  return { message: sentence(text.replace(/^\d{3} (Forbidden - )?/, '')) };
};

/**
 * Errors that mean "not for you": the group or project is not there (or not visible), or the
 * policy refuses the viewer. The console offers no button for these, so reaching one means a
 * forged or stale form: it gets an error page with the status, not a message beside a field.
 */
export const isRefusal = (e: unknown): e is ApiError =>
  e instanceof ApiError && ((e.status === 403 && e.body.message === '403 Forbidden') || (e.status === 404 && / (Group|Project|Namespace) Not Found$/.test(String(e.body.message))));
