import { Hono } from 'hono';
import { KINDS } from '../auth/policy';
import { accountSettingsPages } from './account';
import { twoFactorSettingsPages } from './account-two-factor';
import { adminApplicationPages } from './admin/applications';
import { adminUserPages } from './admin/users';
import { bulkRequestPages } from './bulk-requests';
import { dashboardPages } from './dashboard';
import { pageError } from './error-page';
import { explorePages } from './explore';
import { namespacePages } from './namespace/page';
import { requireAdmin, requireViewer, type ConsoleEnv } from './viewer';

/**
 * The console's addresses: each needs a signed-in viewer (the administration area an
 * administrator). app.ts gives them the session and the origin check of every page.
 */
export const CONSOLE_PATHS = ['/', '/explore', '/-/*', '/groups/*', '/projects/*', '/admin/*'];

/**
 * The web console: server-rendered pages over the services the API uses (worker/services/,
 * the Durable Objects, worker/auth/policy.ts). Every form posts through formCsrf and answers
 * with a redirect and a flash message (POST-redirect-GET).
 */
export const consolePages = new Hono<ConsoleEnv>();
for (const path of CONSOLE_PATHS) consolePages.use(path, requireViewer);
consolePages.use('/admin/*', requireAdmin);
consolePages
  .route('/', dashboardPages)
  .route('/', bulkRequestPages)
  .route('/', explorePages)
  .route('/', accountSettingsPages)
  .route('/', twoFactorSettingsPages)
  .route('/', adminUserPages)
  .route('/', adminApplicationPages)
  .route(`/${KINDS.group.route}`, namespacePages(KINDS.group))
  .route(`/${KINDS.project.route}`, namespacePages(KINDS.project));

// A page answers with a page: the error a service raised, in words, never its JSON body.
consolePages.onError(pageError);
