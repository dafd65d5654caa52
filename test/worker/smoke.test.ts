import { exports } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';

describe('smoke', () => {
  it('serves version to the admin', async () => {
    const res = await exports.default.fetch('http://knock.test/api/v4/version', { headers: { 'PRIVATE-TOKEN': 'test-admin-token' } });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ version: expect.any(String) });
  });
});
