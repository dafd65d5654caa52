import { beforeAll, describe, expect, it } from 'vitest';
import { ERROR_ANSWERS, ErrorSchema } from '../../worker/api/error-answers';
import { ADMIN, call, createUser } from './support/http';

/**
 * The OpenAPI document declares the error answers Knock really gives, with GitLab's error body
 * (worker/api/error-answers.ts; GitLab's status codes and error bodies:
 * https://docs.gitlab.com/api/rest/troubleshooting/). Every operation of /api/v4/openapi.json is called without a
 * token, with a `read_api` and a `read_user` token, as the administrator with ids that do not
 * exist and ids that are not ids, with every query parameter invalid, and, when it takes a body,
 * with an empty, a malformed, a plain-text and a 1.1 MB one. Every error status it answers must
 * be declared for it, with the Error schema; 401, 413 and 415, which the document gives by an
 * operation's shape, must be answered where declared. No answer is a 5xx.
 */

type Response3 = { description: string; content?: Record<string, { schema: { $ref?: string }; examples?: Record<string, { value: unknown }> }> };
type Operation = { parameters?: { name: string; in: string }[]; requestBody?: unknown; responses: Record<string, Response3> };
type Doc = { paths: Record<string, Record<string, Operation>>; components: { schemas: Record<string, unknown> } };

interface Probe {
  label: string;
  init: RequestInit;
  path: string;
}

const fill = (path: string, value: string) => path.replace(/\{\w+\}/g, value);

describe('error answers in the OpenAPI document', () => {
  let doc: Doc;
  let readApi: Record<string, string>;
  let readUser: Record<string, string>;

  beforeAll(async () => {
    doc = (await (await call('/api/v4/openapi.json')).json()) as Doc;
    readApi = (await createUser('rapi', { scopes: ['read_api'] })).headers;
    readUser = (await createUser('ruser', { scopes: ['read_user'] })).headers;
  }, 60_000);

  const operations = () =>
    Object.entries(doc.paths).flatMap(([path, item]) => Object.entries(item).map(([method, op]) => ({ method: method.toUpperCase(), path, op })));

  it('gives every declared error GitLab’s error body, with examples that are such bodies', () => {
    expect(doc.components.schemas.Error).toBeDefined();
    let pairs = 0;
    for (const { method, path, op } of operations()) {
      for (const [status, answer] of Object.entries(op.responses)) {
        if (Number(status) < 400) continue;
        pairs++;
        const json = answer.content?.['application/json'];
        expect(json?.schema, `${method} ${path} ${status}`).toEqual({ $ref: '#/components/schemas/Error' });
        for (const example of Object.values(json?.examples ?? {})) expect(ErrorSchema.safeParse(example.value).success, `${method} ${path} ${status}`).toBe(true);
      }
    }
    for (const { examples } of Object.values(ERROR_ANSWERS)) for (const p of Object.values(examples)) expect(ErrorSchema.safeParse(p.body).success).toBe(true);
    console.log(`openapi: ${operations().length} operations, ${pairs} declared error answers`);
  });

  it('declares 429 wherever a token is needed: the API counts every call per token (docs/security.md)', () => {
    for (const { method, path, op } of operations()) {
      if (op.responses['401']) expect(op.responses['429'], `${method} ${path}`).toBeDefined();
    }
  });

  it('declares every error status each operation answers, and answers 401, 413 and 415 where it declares them', async () => {
    const undeclared: string[] = [];
    const unanswered: string[] = [];
    for (const { method, path, op } of operations()) {
      const url = (value: string, query = '') => `/api/v4${fill(path, value)}${query}`;
      const query = (op.parameters ?? []).filter((p) => p.in === 'query');
      const invalidQuery = query.length ? `?${query.map((p) => `${p.name}=%25%25not-valid`).join('&')}` : '';
      const probes: Probe[] = [
        { label: 'no token', path: url('999999999'), init: { method } },
        { label: 'read_api', path: url('999999999'), init: { method, headers: readApi } },
        { label: 'read_user', path: url('999999999'), init: { method, headers: readUser } },
        { label: 'admin, unknown ids', path: url('999999999'), init: { method, headers: ADMIN } },
        { label: 'admin, not ids', path: url('abc'), init: { method, headers: ADMIN } },
        { label: 'admin, invalid query', path: url('999999999', invalidQuery), init: { method, headers: ADMIN } },
      ];
      if (op.requestBody) {
        const body = (type: string, text: string) => ({ method, headers: { ...ADMIN, 'Content-Type': type }, body: text });
        probes.push(
          { label: 'empty JSON', path: url('999999999'), init: body('application/json', '{}') },
          { label: 'malformed JSON', path: url('999999999'), init: body('application/json', '{') },
          { label: 'plain text', path: url('999999999'), init: body('text/plain', 'name=x') },
          { label: '1.1 MB', path: url('999999999'), init: body('application/json', JSON.stringify({ name: 'x'.repeat(1_100_000) })) },
        );
      }
      const seen = new Set<number>();
      for (const probe of probes) {
        const res = await call(probe.path, probe.init);
        await res.body?.cancel();
        expect(res.status, `${method} ${probe.path} (${probe.label})`).toBeLessThan(500);
        if (res.status >= 400) seen.add(res.status);
        if (res.status >= 400 && !op.responses[res.status]) undeclared.push(`${method} ${path} ${res.status} (${probe.label})`);
      }
      for (const status of [401, 413, 415]) if (op.responses[status] && !seen.has(status)) unanswered.push(`${method} ${path} ${status}`);
    }
    expect(undeclared, 'answered but not declared in /api/v4/openapi.json').toEqual([]);
    expect(unanswered, 'declared but not answered').toEqual([]);
  }, 300_000);
});
