import { describe, expect, it } from 'vitest';
import { ADMIN, call } from './support/http';

const expectJsonError = async (res: Response, status: number) => {
  expect(res.status).toBe(status);
  expect(res.headers.get('content-type')).toBe('application/json');
  const body = (await res.json()) as Record<string, unknown>;
  expect(typeof (body.error ?? body.message)).toBe('string');
  return body;
};

describe('bad input', () => {
  it('answers malformed JSON with 400', async () => {
    const res = await call('/api/v4/users', { method: 'POST', headers: { ...ADMIN, 'Content-Type': 'application/json' }, body: '{"username": ' });
    await expectJsonError(res, 400);
  });

  it('answers a JSON body that is not an object with 400', async () => {
    for (const body of ['[]', '"text"', 'null', '42']) {
      const res = await call('/api/v4/users', { method: 'POST', headers: { ...ADMIN, 'Content-Type': 'application/json' }, body });
      await expectJsonError(res, 400);
    }
  });

  it('answers an unsupported content type with 415', async () => {
    const res = await call('/api/v4/users', { method: 'POST', headers: { ...ADMIN, 'Content-Type': 'text/plain' }, body: 'username=x' });
    await expectJsonError(res, 415);
    const xml = await call('/api/v4/applications', { method: 'POST', headers: { ...ADMIN, 'Content-Type': 'application/xml' }, body: '<a/>' });
    await expectJsonError(xml, 415);
  });

  it('answers bodies over 1 MB with 413', async () => {
    const big = JSON.stringify({ username: 'x', name: 'x'.repeat(1024 * 1024), password: 'long-enough' });
    const res = await call('/api/v4/users', { method: 'POST', headers: { ...ADMIN, 'Content-Type': 'application/json' }, body: big });
    const body = await expectJsonError(res, 413);
    expect(body).toEqual({ error: '413 Payload Too Large' });
  });

  it('answers unknown routes with 404 and wrong methods with 405', async () => {
    const missing = await call('/api/v4/nothing-here', { headers: ADMIN });
    expect(await expectJsonError(missing, 404)).toEqual({ error: '404 Not Found' });
    expect(await expectJsonError(await call('/no/such/page'), 404)).toEqual({ error: '404 Not Found' });
    const wrong = await call('/api/v4/users', { method: 'PATCH', headers: ADMIN });
    const body = await expectJsonError(wrong, 405);
    expect(body).toEqual({ error: '405 Method Not Allowed' });
    expect(wrong.headers.get('allow')).toContain('GET');
  });

  it('documents the API as OpenAPI 3.1', async () => {
    const res = await call('/api/v4/openapi.json');
    expect(res.status).toBe(200);
    const doc = (await res.json()) as { openapi: string; paths: Record<string, unknown> };
    expect(doc.openapi).toBe('3.1.0');
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(['/users', '/users/{id}', '/applications', '/user', '/version']));
  });
});
