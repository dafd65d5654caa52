import type { Child } from 'hono/jsx';
import { accessLevelName, type AccessLevel } from '../../shared/access-levels';
import { exactTime, timeAgo } from '../../shared/relative-time';
import { clock } from '../clock';
import type { Flash, FormAlert } from './flash';
import { CsrfField } from './layout';

/** Items per page of every console list. */
const PER_PAGE = 20;

/** A list's page number from the query (`?members_page=2`): anything odd is page 1. */
export const pageNumber = (value: string | undefined): number => {
  const n = Number(value);
  return Number.isInteger(n) && n >= 1 && n <= 1_000_000 ? n : 1;
};

/** The rows a page covers, as the services take them. */
export const windowFor = (page: number) => ({ offset: (page - 1) * PER_PAGE, limit: PER_PAGE });

/** "Previous · Page 2 of 5 · Next" for one list of a page; the other lists keep their pages. */
export const Pagination = (p: { url: string; param: string; page: number; total: number; label: string }) => {
  const pages = Math.max(1, Math.ceil(p.total / PER_PAGE));
  if (pages === 1 && p.page === 1) return null;
  const link = (n: number) => {
    const url = new URL(p.url);
    url.searchParams.set(p.param, String(n));
    return url.pathname + url.search;
  };
  return (
    <nav class="pagination" aria-label={`Pages of ${p.label}`}>
      {p.page > 1 ? (
        <a href={link(Math.min(p.page - 1, pages))} rel="prev">
          Previous
        </a>
      ) : null}
      <span>
        Page {p.page} of {pages}
      </span>
      {p.page < pages ? (
        <a href={link(p.page + 1)} rel="next">
          Next
        </a>
      ) : null}
    </nav>
  );
};

/** The notice a POST left for this page (a live region, so screen readers announce it). */
export const FlashNotice = (p: { flash: Flash }) =>
  p.flash.notice ? (
    <div class="notice" role="status">
      {p.flash.notice}
    </div>
  ) : null;

/** The alert of one form, if the flash has one for it. */
export const alertFor = (flash: Flash, form: string): FormAlert | null => (flash.alert?.form === form ? flash.alert : null);

/** The id of the error text of a field, for `aria-describedby`. */
const errorId = (id: string) => `${id}-error`;

/** An error beside a field: tied to it with aria-describedby, announced when the page loads. */
export const FieldError = (p: { id: string; alert: FormAlert | null; field: string }) =>
  p.alert && p.alert.field === p.field ? (
    <p class="field-error" id={errorId(p.id)} role="alert">
      {p.alert.message}
    </p>
  ) : null;

/** A form's error that is about no field in particular. */
export const FormError = (p: { alert: FormAlert | null; fields: string[] }) =>
  p.alert && (!p.alert.field || !p.fields.includes(p.alert.field)) ? (
    <p class="field-error" role="alert">
      {p.alert.message}
    </p>
  ) : null;

/** Attributes of an input that may have an error beside it. */
export const invalid = (id: string, alert: FormAlert | null, field: string) =>
  alert && alert.field === field ? { 'aria-invalid': 'true', 'aria-describedby': errorId(id) } : {};

/** A POST form with the session's CSRF token (and where to come back to). */
export const PostForm = (p: { action: string; csrf: string; returnTo?: string; class?: string; label?: string; id?: string; children: Child }) => (
  <form method="post" action={p.action} class={p.class} aria-label={p.label} id={p.id}>
    <CsrfField token={p.csrf} />
    {p.returnTo ? <input type="hidden" name="return_to" value={p.returnTo} /> : null}
    {p.children}
  </form>
);

/** A select of access levels (the ones this viewer may grant), with the current one chosen. */
export const LevelSelect = (p: { id: string; name?: string; levels: AccessLevel[]; selected: number; label: string; alert?: FormAlert | null }) => (
  <select id={p.id} name={p.name ?? 'access_level'} aria-label={p.label} {...invalid(p.id, p.alert ?? null, 'access_level')}>
    {p.levels.map((l) => (
      <option value={String(l.value)} selected={l.value === p.selected}>
        {l.name}
      </option>
    ))}
  </select>
);

/** A date input for a membership's expiry: empty means none; `earliest` is the first choosable day (UTC). */
export const ExpiryInput = (p: { id: string; value?: string | null; label: string; alert?: FormAlert | null; earliest: string }) => (
  <input type="date" id={p.id} name="expires_at" value={p.value ?? ''} min={p.earliest} aria-label={p.label} {...invalid(p.id, p.alert ?? null, 'expires_at')} />
);

/** A level's name, as GitLab shows it. */
export const Level = (p: { value: number }) => <span class="level">{accessLevelName(p.value)}</span>;

/** A date-time as people read it: how long ago ("3 minutes ago", as the popup says), the exact time in UTC on hover. */
export const When = (p: { iso: string }) => (
  <time datetime={p.iso} title={exactTime(p.iso)}>
    {timeAgo(p.iso, clock.now())}
  </time>
);

/** A titled section of a page (a landmark named by its heading). */
export const Section = (p: { id: string; title: string; children: Child }) => (
  <section class="card" id={p.id} aria-labelledby={`${p.id}-title`}>
    <h2 id={`${p.id}-title`}>{p.title}</h2>
    {p.children}
  </section>
);

/** Tomorrow's date in UTC, the earliest a token's expiry may be (it stops at 00:00 UTC that day). */
export const tomorrowUtc = (now: number): string => new Date(now + 24 * 3600 * 1000).toISOString().slice(0, 10);

/**
 * The second step of an action that cannot be undone (deny, remove): a page that says what will
 * happen, with the confirming button and a way back. Works without JavaScript.
 */
export const Confirm = (p: { title: string; action: string; csrf: string; returnTo: string; confirmLabel: string; fields?: Child; children: Child }) => (
  <div class="card">
    <h1>{p.title}</h1>
    {p.children}
    <PostForm action={p.action} csrf={p.csrf} returnTo={p.returnTo}>
      {p.fields}
      <div class="actions">
        <a class="button" href={p.returnTo}>
          Cancel
        </a>
        <button class="danger" type="submit">
          {p.confirmLabel}
        </button>
      </div>
    </PostForm>
  </div>
);

/**
 * A table of a list: its caption (for screen readers) and its column headings; the rows are
 * the children.
 */
export const DataTable = (p: { caption: Child; columns: string[]; children: Child }) => (
  <table>
    <caption class="visually-hidden">{p.caption}</caption>
    <thead>
      <tr>
        {p.columns.map((column) => (
          <th scope="col">{column}</th>
        ))}
      </tr>
    </thead>
    <tbody>{p.children}</tbody>
  </table>
);

/** A labelled text input with its error beside it; `value` is what to show (never a password). */
export const TextField = (p: {
  id: string;
  name: string;
  label: string;
  type?: string;
  value?: string;
  alert: FormAlert | null;
  required?: boolean;
  minlength?: number;
  autocomplete?: string;
}) => (
  <div>
    <label for={p.id}>{p.label}</label>
    <input
      type={p.type ?? 'text'}
      id={p.id}
      name={p.name}
      value={p.value ?? ''}
      required={p.required}
      minlength={p.minlength}
      autocomplete={p.autocomplete ?? 'off'}
      {...invalid(p.id, p.alert, p.name)}
    />
    <FieldError id={p.id} alert={p.alert} field={p.name} />
  </div>
);
