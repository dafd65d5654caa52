import { ADMIN, call } from './http';

/**
 * The runtime's first request starts the Worker in workerd and its first Durable Object (the
 * Directory, asked for the partition count), which takes tens of seconds on 2 cores while the
 * other projects of `npm test` start too. This module is evaluated once per runtime (the files
 * share it: `isolate: false`), and the setup file awaits it when it is imported, so that start is
 * not counted against whichever file's first hook or test happens to send the first request.
 */
export const started: Promise<void> = call('/api/v4/version', { headers: ADMIN }).then(async (res) => {
  if (res.status !== 200) throw new Error(`the Worker did not start: GET /api/v4/version answered ${res.status} ${await res.text()}`);
});
