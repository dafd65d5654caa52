// The demo data of `npm start` (worker/dev/demo-data.mjs) on a test server: alice owns acme and
// acme/website; bob and carol have asked for access to both.

// @ts-expect-error: plain ESM module without types
import { seedDemo as seed } from '../../../worker/dev/demo-data.mjs';
import type { KnockAddress } from './knock-server';

export interface DemoUser {
  username: string;
  password: string;
  token: string;
}

export async function seedDemo(server: KnockAddress): Promise<Record<'alice' | 'bob' | 'carol', DemoUser>> {
  const demo = (await seed(server.url, server.adminToken)) as { users: DemoUser[] };
  const user = (username: string): DemoUser => {
    const found = demo.users.find((u) => u.username === username);
    if (!found) throw new Error(`the demo data has no ${username}`);
    return found;
  };
  return { alice: user('alice'), bob: user('bob'), carol: user('carol') };
}
