/// <reference types="vite/client" />
import { describe, expect, it } from 'vitest';
import apiDoc from '../../docs/api.md?raw';
import { call } from './support/http';

/**
 * docs/api.md must document exactly the operations of the live OpenAPI document.
 *
 * An operation is written in docs/api.md as inline code: the method, a space, and the OpenAPI
 * path relative to /api/v4 with `{param}` placeholders, e.g. `GET /groups/{id}/access_requests`.
 * Only the /api/v4 part of the file counts: from the level-2 heading that names `/api/v4` to the
 * next level-2 heading (the token service's routes live outside /api/v4 and are not in the
 * OpenAPI document).
 */
const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];
const OPERATION = new RegExp(`\`(${METHODS.join('|')}) (/[^\`\\s?]*)[^\`]*\``, 'g');

const apiSection = (markdown: string): string | null => {
  const lines = markdown.split('\n');
  const start = lines.findIndex((l) => l.startsWith('## ') && l.includes('/api/v4'));
  if (start < 0) return null;
  const end = lines.findIndex((l, i) => i > start && l.startsWith('## '));
  return lines.slice(start, end < 0 ? undefined : end).join('\n');
};

const documented = (section: string): Set<string> => new Set([...section.matchAll(OPERATION)].map((m) => `${m[1]} ${m[2]}`));

const liveOperations = async (): Promise<Set<string>> => {
  const res = await call('/api/v4/openapi.json');
  expect(res.status).toBe(200);
  const doc = (await res.json()) as { paths: Record<string, Record<string, unknown>> };
  const ops = new Set<string>();
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const method of Object.keys(item)) if (METHODS.includes(method.toUpperCase())) ops.add(`${method.toUpperCase()} ${path}`);
  }
  return ops;
};

const listing = (title: string, ops: string[]) => (ops.length ? [`${title}:`, ...ops.map((o) => `  \`${o}\``)] : []);

describe('docs/api.md', () => {
  it('has a section for /api/v4', () => {
    expect(apiSection(apiDoc), 'docs/api.md needs a level-2 heading ("## …") that names /api/v4').not.toBeNull();
  });

  it('documents every operation of /api/v4/openapi.json, and no other /api/v4 operation', async () => {
    const live = await liveOperations();
    expect(live.size).toBeGreaterThan(0);
    const written = documented(apiSection(apiDoc) ?? '');
    const missing = [...live].filter((op) => !written.has(op)).sort();
    const extra = [...written].filter((op) => !live.has(op)).sort();
    const message = [
      'docs/api.md and /api/v4/openapi.json disagree.',
      ...listing('Document these operations in the /api/v4 section of docs/api.md (method and OpenAPI path, relative to /api/v4)', missing),
      ...listing('These are written in docs/api.md but the OpenAPI document has no such operation (remove or correct them)', extra),
    ].join('\n');
    expect({ missing, extra }, message).toEqual({ missing: [], extra: [] });
  });
});

describe("docs/api.md's lists of scopes", () => {
  /** GitLab's scopes of a token, which Knock takes wherever scopes are chosen (worker/oauth/scopes.ts). */
  const TOKEN_SCOPES = ['api', 'read_api', 'read_user'];

  it('name every scope a token may have, wherever they offer a choice', () => {
    const lists = apiDoc.split('\n').filter((line) => /`api`(,| and| or) `read_api`/.test(line));
    expect(lists.length).toBeGreaterThan(0);
    for (const line of lists) for (const scope of TOKEN_SCOPES) expect(line, line).toContain(`\`${scope}\``);
  });
});
