import { Hono } from 'hono';
import type { PageEnv } from '../auth/session';
import { STYLESHEET } from './style';
import { WEBAUTHN_SCRIPT } from './webauthn-script';

/** The pages' one stylesheet and one script (the dashboard at `/` is in dashboard.tsx). */
export const homePages = new Hono<PageEnv>()
  .get('/assets/knock.css', (c) => c.body(STYLESHEET, 200, { 'Content-Type': 'text/css; charset=utf-8', 'Cache-Control': 'public, max-age=3600' }))
  .get('/assets/webauthn.js', (c) => c.body(WEBAUTHN_SCRIPT, 200, { 'Content-Type': 'text/javascript; charset=utf-8', 'Cache-Control': 'public, max-age=3600' }));
