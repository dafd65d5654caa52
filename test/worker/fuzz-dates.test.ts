import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { consoleSession } from './support/console';
import { fuzzParameters, reportCases, timeoutFor } from './support/fuzz';
import { ADMIN, call, type Browser } from './support/http';
import { admin, as, createGroup, createProject, person, startWorker, type Person } from './support/namespaces';

/**
 * Every date and time parameter Knock takes, fed strings of date shape: dates that do not exist
 * (`2027-13-45`), out-of-range hours and offsets, odd widths and separators. Whatever the text,
 * the answer is never a 5xx (worker/dates.ts parses them all, and never throws). The API's are
 * read from /api/v4/openapi.json (every parameter and body field of format `date` or
 * `date-time`), so a new one is fuzzed without a change here; the console's forms are listed.
 * GitLab answers a parameter it cannot read with 400; a 5xx is GitLab's "something went wrong on
 * the server" ("Status codes", https://docs.gitlab.com/api/rest/troubleshooting/).
 */

type Schema = { $ref?: string; format?: string; anyOf?: Schema[]; oneOf?: Schema[]; properties?: Record<string, Schema> };
type Operation = {
  parameters?: { name: string; in: string; schema?: Schema }[];
  requestBody?: { content: Record<string, { schema: Schema }> };
};
type Doc = { paths: Record<string, Record<string, Operation>>; components?: { schemas?: Record<string, Schema> } };

/** One place a date goes: an API operation's query parameter or body field, or a console form's field. */
interface DateInput {
  label: string;
  send: (value: string, form: boolean) => Promise<Response>;
}

const num = (min: number, max: number, width: number) => fc.integer({ min, max }).map((n) => String(n).padStart(width, '0'));

/** Text of date shape: mostly `YYYY-MM-DD[Thh:mm[:ss[.f]][offset]]` with any numbers, sometimes bent. */
const dateShaped: fc.Arbitrary<string> = fc.oneof(
  { arbitrary: fc.tuple(num(0, 9999, 4), num(0, 99, 2), num(0, 99, 2)).map(([y, m, d]) => `${y}-${m}-${d}`), weight: 4 },
  {
    arbitrary: fc
      .tuple(
        fc.tuple(num(0, 9999, 4), num(0, 99, 2), num(0, 99, 2)),
        fc.constantFrom('T', ' ', 't'),
        fc.tuple(num(0, 99, 2), num(0, 99, 2)),
        fc.option(fc.tuple(num(0, 99, 2), fc.option(fc.integer({ min: 0, max: 999_999_999 }).map(String)))),
        fc.option(fc.oneof(fc.constantFrom('Z', 'z'), fc.tuple(fc.constantFrom('+', '-'), num(0, 99, 2), fc.constantFrom(':', ''), num(0, 99, 2)).map((p) => p.join('')))),
      )
      .map(([[y, mo, d], t, [h, mi], s, off]) => `${y}-${mo}-${d}${t}${h}:${mi}${s ? `:${s[0]}${s[1] ? `.${s[1]}` : ''}` : ''}${off ?? ''}`),
    weight: 4,
  },
  {
    arbitrary: fc.constantFrom(
      '2027-13-45', '2027-02-29', '2028-02-29', '0000-01-01', '9999-12-31', '0000-00-00', '9999-99-99', '2027-12-31T23:59:59-23:59',
      '0000-01-01T00:00:00+23:59', '9999-12-31T23:59:59.999-23:59', '+275760-09-13', '-000001-01-01', '20270101', '2027/01/31',
      '2027-1-1', '2027-01-31T', '2027-01-31T25:61', '2027-01-31 ', ' 2027-01-31', '２０２７-０１-３１', '2027-01-31\u0000', '1e308', '',
    ),
    weight: 2,
  },
  { arbitrary: fc.tuple(fc.integer({ min: 0, max: 99_999_999 }), fc.string({ maxLength: 6 })).map(([n, s]) => `${n}-${s}`), weight: 1 },
);

const resolve = (doc: Doc, schema: Schema | undefined): Schema | undefined =>
  schema?.$ref ? doc.components?.schemas?.[schema.$ref.split('/').pop() ?? ''] : schema;

const takesDates = (doc: Doc, schema: Schema | undefined): boolean => {
  const s = resolve(doc, schema);
  if (!s) return false;
  return s.format === 'date' || s.format === 'date-time' || [...(s.anyOf ?? []), ...(s.oneOf ?? [])].some((alt) => takesDates(doc, alt));
};

/** A form or JSON body. */
const body = (fields: Record<string, unknown>, form: boolean): RequestInit =>
  form
    ? { body: new URLSearchParams(Object.entries(fields).map(([k, v]) => [k, Array.isArray(v) ? v.join(',') : String(v)])) }
    : { body: JSON.stringify(fields), headers: { 'Content-Type': 'application/json' } };

describe('every date-taking parameter, fed text of date shape', () => {
  let owner: Person;
  let member: Person;
  let browser: Browser;
  let csrf: string;
  const inputs: DateInput[] = [];

  beforeAll(async () => {
    await startWorker();
    [owner, member] = await Promise.all([person('own'), person('mem')]);
    const group = await createGroup(owner);
    const project = await createProject(owner, { namespace_id: group.id });
    for (const kind of ['groups', 'projects']) {
      const id = kind === 'groups' ? group.id : project.id;
      expect((await as(owner).post(`/${kind}/${id}/members`, { user_id: member.id, access_level: 20 })).status).toBe(201);
    }
    // Requesters to approve, on the group and on the project (an approval that succeeds uses one up; later ones are 404).
    const requesters = await Promise.all([person('req'), person('req')]);
    for (const r of requesters) {
      for (const [kind, id] of [['groups', group.id], ['projects', project.id]] as const) expect((await as(r).post(`/${kind}/${id}/access_requests`)).status).toBe(201);
    }
    ({ browser, csrf } = await consoleSession({ id: owner.id, username: owner.username, password: 'correct horse battery', headers: owner.headers }));
    const administrator = await person('adm', { admin: true });
    const adminSession = await consoleSession({ ...administrator, password: 'correct horse battery' });

    const doc = (await (await admin.get('/openapi.json')).json()) as Doc;
    const pathValues: Record<string, (path: string) => string> = {
      id: (path) => String(path.startsWith('/users') ? member.id : path.startsWith('/projects') ? project.id : group.id),
      user_id: (path) => String(path.includes('access_requests') ? requesters[0].id : member.id),
    };
    // Asking for access is for someone without it: a requester who has none (an administrator has it, 403).
    const asker = await person('ask');
    const credentialsOf = (method: string, path: string) => (method === 'post' && path.endsWith('/access_requests') ? asker.headers : ADMIN);
    const fill = (path: string) => path.replace(/\{(\w+)\}/g, (_, name: string) => pathValues[name]?.(path) ?? '1');
    /** Valid values for the other fields of a body, so the date is what is judged. */
    const others: Record<string, unknown> = { user_id: member.id, access_level: 30, name: 'fuzz', scopes: ['api'] };
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(item)) {
        for (const p of op.parameters ?? []) {
          if (p.in !== 'query' || !takesDates(doc, p.schema)) continue;
          inputs.push({
            label: `${method.toUpperCase()} ${path} ?${p.name}`,
            send: (value) => call(`/api/v4${fill(path)}?${new URLSearchParams({ [p.name]: value })}`, { method: method.toUpperCase(), headers: credentialsOf(method, path) }),
          });
        }
        const schema = resolve(doc, op.requestBody?.content['application/json']?.schema);
        for (const [field, fieldSchema] of Object.entries(schema?.properties ?? {})) {
          if (!takesDates(doc, fieldSchema)) continue;
          inputs.push({
            label: `${method.toUpperCase()} ${path} body ${field}`,
            send: (value, form) => {
              const init = body({ ...others, [field]: value }, form);
              return call(`/api/v4${fill(path)}`, { ...init, method: method.toUpperCase(), headers: { ...credentialsOf(method, path), ...(init.headers as Record<string, string>) } });
            },
          });
        }
      }
    }
    const page = (label: string, action: string, fields: Record<string, string>) =>
      inputs.push({ label, send: (value) => browser.post(action, { authenticity_token: csrf, ...fields, expires_at: value }) });
    for (const [kind, id] of [['groups', group.id], ['projects', project.id]] as const) {
      page(`console: approve on ${kind}`, `/${kind}/${id}/-/access_requests/${requesters[1].id}/approve`, { access_level: '30' });
      page(`console: add a member to ${kind}`, `/${kind}/${id}/-/members`, { username: requesters[1].username, access_level: '30' });
      page(`console: change a member of ${kind}`, `/${kind}/${id}/-/members/${member.id}`, { access_level: '30' });
    }
    page('console: new personal access token', '/-/profile/personal_access_tokens', { name: 'fuzz', scopes: 'api' });
    inputs.push({
      label: 'console: new impersonation token',
      send: (value) =>
        adminSession.browser.post(`/admin/users/${member.id}/impersonation_tokens`, { authenticity_token: adminSession.csrf, name: 'fuzz', scopes: 'api', expires_at: value }),
    });
  }, 60_000);

  it('finds them in the OpenAPI document', () => {
    const labels = inputs.map((i) => i.label);
    for (const expected of [
      'PUT /groups/{id}/members/{user_id} body expires_at',
      'POST /projects/{id}/members body expires_at',
      'PUT /projects/{id}/access_requests/{user_id}/approve ?expires_at',
      'PUT /projects/{id}/access_requests/{user_id}/approve body expires_at',
      'POST /projects/{id}/access_requests ?expires_at',
      'POST /groups/{id}/access_requests body expires_at',
      'POST /user/personal_access_tokens body expires_at',
      'POST /users/{id}/impersonation_tokens body expires_at',
      'GET /personal_access_tokens ?expires_before',
      'GET /personal_access_tokens ?created_after',
      'GET /audit_events ?created_before',
      'GET /groups/{id}/audit_events ?created_after',
      'GET /access_requests ?min_requested_at',
    ]) {
      expect(labels).toContain(expected);
    }
  });

  it('reaches each with its credentials: a real date is not refused as unauthenticated or forbidden', async () => {
    const date = new Date(Date.now() + 10 * 86_400_000).toISOString().slice(0, 10);
    for (const input of inputs) {
      const res = await input.send(date, false);
      await res.body?.cancel();
      expect([401, 403, 405, 415], input.label).not.toContain(res.status);
    }
  });

  // A date that looks right but does not exist is a parameter GitLab cannot read: 400 `<name> is
  // invalid`, never a 500 ("Status codes", https://docs.gitlab.com/api/rest/troubleshooting/;
  // `expires_at` is "a date string in the format YEAR-MONTH-DAY", https://docs.gitlab.com/api/members/).
  it('answers 400 `<name> is invalid` to 2027-13-45 on every date parameter of the API, as JSON and as a form', async () => {
    const answers: Record<string, unknown> = {};
    const expected: Record<string, unknown> = {};
    for (const input of inputs.filter((i) => !i.label.startsWith('console'))) {
      for (const form of input.label.includes(' body ') ? [false, true] : [false]) {
        const label = `${input.label}${form ? ' (form)' : ''}`;
        const res = await input.send('2027-13-45', form);
        answers[label] = { status: res.status, body: await res.json() };
        expected[label] = { status: 400, body: { error: `${input.label.split(/[ ?]/).pop()} is invalid` } };
      }
    }
    expect(Object.keys(answers).length).toBeGreaterThanOrEqual(13);
    expect(answers).toEqual(expected);
  });

  const runs = fuzzParameters(400).numRuns;
  it(
    'never answers 5xx',
    async () => {
      await fc.assert(
        fc.asyncProperty(fc.nat(), dateShaped, fc.boolean(), async (pick, value, form) => {
          const input = inputs[pick % inputs.length];
          const res = await input.send(value, form);
          await res.body?.cancel();
          expect(res.status, `${input.label} = ${JSON.stringify(value)}`).toBeLessThan(500);
        }),
        fuzzParameters(400),
      );
      reportCases('dates', runs);
    },
    timeoutFor(runs, 60),
  );
});
