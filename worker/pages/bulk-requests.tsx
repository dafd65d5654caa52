import { z } from '@hono/zod-openapi';
import { Hono } from 'hono';
import { DEFAULT_APPROVAL_LEVEL } from '../../shared/access-levels';
import { membershipExpiry } from '../api/access-requests';
import { dateParam } from '../api/params';
import { KINDS, type Kind } from '../auth/policy';
import { ApiError, problems, raise } from '../errors';
import { withNamespace } from '../services/finder';
import * as inboxService from '../services/inbox';
import { parseForm, returnTo } from './actions';
import { Confirm } from './components';
import { setFlash } from './flash';
import { formCsrf, type FormFields } from './form-csrf';
import { Layout } from './layout';
import { approveRequest, BULK_ACTION, BULK_CAP, BULK_FORM, denyRequest, selectionOf, type ApprovalValues } from './namespace/access-requests';
import { describeProblem, isRefusal } from './problems';
import type { ConsoleEnv } from './viewer';

/**
 * Many requests at once: the bulk form of the dashboard and of a group's or project's Access
 * requests tab. One POST approves (one level, an optional expiry) or denies (after a confirmation
 * page) each selected request through the same function as the row's own form, and reports per
 * request what happened in the notice. A request someone answered meanwhile, or one the viewer
 * may not answer, is reported and the others still go through: a partly refused batch is no error.
 */

/** One selected request, parsed from its checkbox's value. */
interface Selected {
  key: string;
  kind: Kind;
  namespaceId: number;
  userId: number;
}

/** How one request of the batch ended. */
type Outcome = { selected: Selected; done: true; notice: string } | { selected: Selected; done: false; why: string };

/** Requests answered side by side; the rest wait their turn. */
const AT_ONCE = 6;

const SELECTION = /^(group|project):([1-9][0-9]{0,14}):([1-9][0-9]{0,14})$/;

/** The values of a field that may repeat (parseBody's `all`). */
const allTexts = (form: FormFields, name: string): string[] => {
  const value = form[name];
  return (Array.isArray(value) ? value : value === undefined ? [] : [value]).filter((v): v is string => typeof v === 'string');
};

/** The last text value of a field. */
const lastText = (form: FormFields, name: string): string => allTexts(form, name).at(-1) ?? '';

/** The ticked checkboxes, each once; a value that names no request is refused whole, as is a batch over the cap. */
const selectionFrom = (form: FormFields): Selected[] => {
  const keys = [...new Set(allTexts(form, 'requests'))];
  if (keys.length === 0) return raise(problems.badRequest('Select at least one request.'));
  if (keys.length > BULK_CAP) return raise(problems.badRequest(`Select at most ${BULK_CAP} requests at once.`));
  return keys.map((key) => {
    const m = SELECTION.exec(key);
    if (!m) return raise(problems.badRequest('A selected request is not one of this page.'));
    return { key, kind: KINDS[m[1] as keyof typeof KINDS], namespaceId: Number(m[2]), userId: Number(m[3]) };
  });
};

/** The expiry, judged once for the whole batch (so a past date is one error beside its field, not one per request). */
const expiryOf = (values: ApprovalValues): void => {
  const { expires_at } = parseForm(z.object({ expires_at: z.union([dateParam(), z.literal('')]) }), values);
  membershipExpiry(expires_at || null);
};

/** Runs `op` on each item, at most `AT_ONCE` at a time, in order. */
const eachAtOnce = async <T, R>(items: T[], op: (item: T) => Promise<R>): Promise<R[]> => {
  const results: R[] = [];
  for (let i = 0; i < items.length; i += AT_ONCE) results.push(...(await Promise.all(items.slice(i, i + AT_ONCE).map(op))));
  return results;
};

/** How the viewer's inbox names the selected requests ("@bob for acme/website"), from one read of it. */
const namesOf = async (c: { env: ConsoleEnv['Bindings']; var: ConsoleEnv['Variables'] }, selected: Selected[]): Promise<Map<string, string>> => {
  const { page } = await inboxService.readInbox(c.env, c.var.caller, {}, { offset: 0, limit: 2 * BULK_CAP }, null);
  const names = new Map((page?.items ?? []).map((i) => [selectionOf(KINDS[i.kind], i.namespace_id, i.user_id), `@${i.username}'s request for ${i.source_full_path}`]));
  return new Map(selected.map((s) => [s.key, names.get(s.key) ?? `the request of user ${s.userId} for ${s.kind.name} ${s.namespaceId}`]));
};

/** The notice of a batch: what was done, then each request that was not, and why. Kept short enough for its cookie. */
const report = (outcomes: Outcome[], names: Map<string, string>): string => {
  const done = outcomes.filter((o) => o.done);
  const notDone = outcomes.filter((o) => !o.done);
  const lines = [`Answered ${done.length} of ${outcomes.length} selected requests.`];
  for (const o of done) lines.push(o.notice);
  for (const o of notDone) lines.push(`Not answered: ${names.get(o.selected.key)}: ${o.why}`);
  const text = lines.join(' ');
  return text.length <= 1500 ? text : `${text.slice(0, 1497)}…`;
};

export const bulkRequestPages = new Hono<ConsoleEnv>().post(BULK_ACTION, formCsrf({ all: true }), async (c) => {
  const form = c.var.form;
  const back = returnTo({ return_to: lastText(form, 'return_to') }, '/');
  const decision = lastText(form, 'decision');
  const values: ApprovalValues = { access_level: lastText(form, 'access_level') || String(DEFAULT_APPROVAL_LEVEL), expires_at: lastText(form, 'expires_at') };
  let selected: Selected[];
  try {
    if (decision !== 'approve' && decision !== 'deny') raise(problems.badRequest('Choose Approve selected or Deny selected.'));
    selected = selectionFrom(form);
    if (decision === 'approve') expiryOf(values);
  } catch (e) {
    if (!(e instanceof ApiError)) throw e;
    await setFlash(c, { alert: { form: BULK_FORM, ...describeProblem(e) }, values });
    return c.redirect(back, 303);
  }
  const names = await namesOf(c, selected);
  const viewer = c.var.viewer;

  // Denying cannot be undone: a page of its own says what will happen first, as a row's Deny does.
  if (decision === 'deny' && lastText(form, 'confirmed') !== 'yes') {
    return c.html(
      <Layout title="Deny access requests" viewer={viewer}>
        <Confirm title={`Deny ${selected.length} access ${selected.length === 1 ? 'request' : 'requests'}?`} action={BULK_ACTION} csrf={viewer.csrf} returnTo={back} confirmLabel={`Deny ${selected.length} selected`}
          fields={
            <>
              <input type="hidden" name="decision" value="deny" />
              <input type="hidden" name="confirmed" value="yes" />
              {selected.map((s) => (
                <input type="hidden" name="requests" value={s.key} />
              ))}
            </>
          }
        >
          <p>Denying removes each request; they may ask again.</p>
          <ul>
            {selected.map((s) => (
              <li>{names.get(s.key)}</li>
            ))}
          </ul>
        </Confirm>
      </Layout>,
    );
  }

  const outcomes = await eachAtOnce(selected, async (s): Promise<Outcome> => {
    try {
      const notice = await withNamespace(c, s.kind, s.namespaceId, (target) =>
        decision === 'approve' ? approveRequest(c, s.kind, target, s.userId, values) : denyRequest(c, target, s.userId),
      );
      return { selected: s, done: true, notice };
    } catch (e) {
      if (!(e instanceof ApiError)) {
        console.error('bulk access request answer failed', s.key, e);
        return { selected: s, done: false, why: 'Knock could not answer it; please try again.' };
      }
      if (e.status === 404 && !isRefusal(e)) return { selected: s, done: false, why: 'it is no longer pending: someone may have answered it already.' };
      return { selected: s, done: false, why: describeProblem(e).message };
    }
  });
  await setFlash(c, { notice: report(outcomes, names) });
  return c.redirect(back, 303);
});
