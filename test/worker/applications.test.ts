import { runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { ADMIN, call, createUser, jsonBody } from './support/http';

const register = (body: Record<string, unknown>, headers: Record<string, string> = ADMIN) => call('/api/v4/applications', jsonBody(body, headers));

describe('applications API', () => {
  it('registers an application and shows its secret exactly once', async () => {
    const res = await register({ name: 'CI bot', redirect_uri: 'https://ci.example/callback http://127.0.0.1/cb', scopes: 'api read_api' });
    expect(res.status).toBe(201);
    const app = (await res.json()) as Record<string, unknown>;
    expect(app).toMatchObject({ application_name: 'CI bot', callback_url: 'https://ci.example/callback\nhttp://127.0.0.1/cb', confidential: true });
    expect(app.application_id).toMatch(/^[0-9a-f]{64}$/);
    expect(app.secret).toMatch(/^knock_cs_/);

    const list = (await (await call('/api/v4/applications', { headers: ADMIN })).json()) as Record<string, unknown>[];
    const listed = list.find((a) => a.id === app.id)!;
    expect(listed).toMatchObject({ application_id: app.application_id });
    expect(listed).not.toHaveProperty('secret');

    // Storage holds only a keyed hash of the secret.
    const stored = await runInDurableObject(env.DIRECTORY.getByName('directory'), (_o, state) =>
      state.storage.sql.exec<{ secret_hash: string }>('SELECT secret_hash FROM applications WHERE id = ?', app.id).one(),
    );
    expect(stored.secret_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(stored.secret_hash).not.toContain(String(app.secret));
  });

  it('registers a public application without a secret', async () => {
    const res = await register({ name: 'CLI', redirect_uri: 'http://127.0.0.1/callback', confidential: false });
    expect(res.status).toBe(201);
    expect(await res.json()).toMatchObject({ confidential: false, secret: null });
  });

  it('refuses redirect URIs with fragments, script schemes or none at all, and unknown scopes', async () => {
    for (const redirect_uri of ['https://a.example/cb#frag', 'javascript:alert(1)', 'not a url', '']) {
      const res = await register({ name: 'Bad', redirect_uri });
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual({ error: 'redirect_uri is invalid' });
    }
    const scopes = await register({ name: 'Bad', redirect_uri: 'https://a.example/cb', scopes: 'api sudo' });
    expect(await scopes.json()).toEqual({ error: 'scopes does not have a valid value' });
    expect(await (await register({ redirect_uri: 'https://a.example/cb' })).json()).toEqual({ error: 'name is missing' });
  });

  it('is for administrators only', async () => {
    const eve = await createUser('eve');
    expect((await register({ name: 'X', redirect_uri: 'https://a.example/cb' }, eve.headers)).status).toBe(403);
    expect((await call('/api/v4/applications', { headers: eve.headers })).status).toBe(403);
    expect((await call('/api/v4/applications/1', { method: 'DELETE', headers: eve.headers })).status).toBe(403);
    expect((await call('/api/v4/applications')).status).toBe(401);
  });

  it('deletes an application', async () => {
    const app = (await (await register({ name: 'Temp', redirect_uri: 'https://t.example/cb' })).json()) as { id: number };
    const del = await call(`/api/v4/applications/${app.id}`, { method: 'DELETE', headers: ADMIN });
    expect(del.status).toBe(204);
    expect(await del.text()).toBe('');
    const again = await call(`/api/v4/applications/${app.id}`, { method: 'DELETE', headers: ADMIN });
    expect(again.status).toBe(404);
    expect(await again.json()).toEqual({ message: '404 Application Not Found' });
  });
});
