import type { Context } from 'hono';
import { withNamespace, type Target } from '../../services/finder';
import type { Kind } from '../../auth/policy';
import { act, returnTo, type ActionOptions } from '../actions';
import type { FormFields } from '../form-csrf';
import type { ConsoleEnv } from '../viewer';
import { tabNamed, tabPath, type Tab } from './view';

/** The `:id` of an action's address (`/groups/12/-/…`): always an integer, so forms survive a rename. */
export const ID = ':id{[0-9]+}';
/** A user id in an action's address. */
export const USER_ID = ':user_id{[0-9]+}';

/**
 * Runs a form's action on the group or project `:id` through the finder and the services (as
 * the API's routes do), then back to the page it came from (or the tab of the group's or
 * project's pages where the form is, `tab`).
 */
export const actOn = <E extends ConsoleEnv>(
  c: Context<E>,
  kind: Kind,
  form: FormFields,
  options: Omit<ActionOptions, 'returnTo'> & { tab: Tab['id'] },
  op: (target: Target) => Promise<string>,
): Promise<Response> => {
  const id = Number(c.req.param('id'));
  const { tab, ...rest } = options;
  return act(c, { ...rest, returnTo: returnTo(form, tabPath(kind, `/${kind.route}/${id}`, tabNamed(tab))) }, () => withNamespace(c, kind, id, op));
};
