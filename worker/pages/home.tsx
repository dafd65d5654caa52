import { Hono } from 'hono';
import type { PageEnv } from '../env';
import { STYLESHEET } from './style';

/** The pages' one stylesheet (the dashboard at `/` is in dashboard.tsx). */
export const homePages = new Hono<PageEnv>().get('/assets/knock.css', (c) =>
  c.body(STYLESHEET, 200, { 'Content-Type': 'text/css; charset=utf-8', 'Cache-Control': 'public, max-age=3600' }),
);
