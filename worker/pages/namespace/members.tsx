import { z } from '@hono/zod-openapi';
import { Hono } from 'hono';
import { DEFAULT_APPROVAL_LEVEL, accessLevelName } from '../../../shared/access-levels';
import { accessLevelParam, membershipExpiry } from '../../api/access-requests';
import { dateParam } from '../../api/params';
import { withNamespace } from '../../services/finder';
import { KINDS, mayManageMemberAt, mayManageMembers, type Kind } from '../../auth/policy';
import { directory } from '../../durable/directory/directory';
import { ApiError, problems, raise } from '../../errors';
import * as service from '../../services/namespaces';
import { formText, invalidField, parseForm } from '../actions';
import {
  alertFor,
  Confirm,
  DataTable,
  ExpiryInput,
  FieldError,
  FormError,
  invalid,
  Level,
  LevelSelect,
  Pagination,
  pageNumber,
  PostForm,
  Section,
  When,
  windowFor,
} from '../components';
import { formCsrf } from '../form-csrf';
import { Layout } from '../layout';
import type { ConsoleEnv } from '../viewer';
import { actOn, ID, USER_ID } from './actions';
import { grantableLevels, pagePathOf, tabNamed, tabPath, type NamespaceView } from './view';

const memberForm = (userId: number) => `member-${userId}`;
const ADD_FORM = 'add-member';

/** The form's level and expiry, read with the API's own parameters; an empty expiry is none. */
const membership = (kind: Kind) => z.object({ access_level: accessLevelParam(kind), expires_at: z.union([dateParam(), z.literal('')]) });

/** Direct members: level, expiry, who added them; for those who may, change, remove and add. */
export const Members = async (p: { view: NamespaceView }) => {
  const { view } = p;
  const { viewer } = view.c.var;
  const page = pageNumber(view.c.req.query('members_page'));
  const search = (view.c.req.query('search') ?? '').trim().slice(0, 100);
  const { total, items } = await service.listMembers(view.c.env, view.target, windowFor(page), search || undefined);
  const levels = grantableLevels(view.kind, view.standing);
  const addAlert = alertFor(view.flash, ADD_FORM);
  const addValues = addAlert ? view.flash.values ?? {} : {};
  return (
    <Section id="members" title={`Members (${total})`}>
      {view.row.parent?.kind === 'group' ? (
        <p class="muted">
          Members of <a href={`/groups/${view.row.parent.full_path}`}>{view.row.parent.full_path}</a> and the groups above it have access too.
        </p>
      ) : null}
      <form method="get" action={view.pagePath} class="search" role="search" aria-label="Search members">
        <label for="members-search">Search members by name or username</label>
        <input type="search" id="members-search" name="search" value={search} />
        <button type="submit">Search</button>
      </form>
      {search && items.length === 0 ? <p class="muted">No member matches “{search}”.</p> : null}
      <DataTable caption={`Direct members of ${view.row.full_path}`} columns={['Member', 'Access', 'Since', 'Actions']}>
        {items.map(({ member, user, createdBy }) => {
          const who = `@${user.username}`;
          const id = `member-${member.user_id}`;
          const manages = mayManageMemberAt(view.kind, view.standing, member.access_level);
          const alert = alertFor(view.flash, memberForm(member.user_id));
          const removeLabel = member.user_id === viewer.user.id ? 'Leave' : 'Remove';
          return (
            <tr aria-label={`${user.name} (${who})`}>
              <td>
                <strong>{user.name}</strong> <span class="muted">{who}</span>
                {createdBy ? <div class="muted">added by @{createdBy.username}</div> : null}
              </td>
              <td>
                {manages ? (
                  <PostForm action={`${view.actions}/members/${member.user_id}`} csrf={viewer.csrf} returnTo={view.pagePath} class="row-form" label={`Change ${who}`}>
                    <LevelSelect id={`${id}-level`} levels={levels} selected={member.access_level} label={`Access level of ${who}`} alert={alert} />
                    <ExpiryInput id={`${id}-expires`} value={member.expires_at} label={`Expiry date of ${who} (empty: none)`} alert={alert} earliest={view.earliestExpiry} />
                    <button type="submit" aria-label={`Save ${who}`}>
                      Save
                    </button>
                    <FieldError id={`${id}-level`} alert={alert} field="access_level" />
                    <FieldError id={`${id}-expires`} alert={alert} field="expires_at" />
                    <FormError alert={alert} fields={['access_level', 'expires_at']} />
                  </PostForm>
                ) : (
                  <>
                    <Level value={member.access_level} />
                    {member.expires_at ? <div class="muted">until {member.expires_at}</div> : null}
                  </>
                )}
              </td>
              <td>
                <When iso={member.created_at} />
              </td>
              <td>
                {manages || member.user_id === viewer.user.id ? (
                  <a class="button danger" href={`${view.actions}/members/${member.user_id}/remove`} aria-label={`${removeLabel} ${who}`}>
                    {removeLabel}
                  </a>
                ) : null}
              </td>
            </tr>
          );
        })}
      </DataTable>
      <Pagination url={view.url} param="members_page" page={page} total={total} label="members" />
      {mayManageMembers(view.kind, view.standing) ? (
        <PostForm action={`${view.actions}/members`} csrf={viewer.csrf} returnTo={view.pagePath} class="add-member" label="Add a member">
          <h3>Add a member</h3>
          <div class="fields">
            <div>
              <label for="add-username">Username</label>
              <input type="text" id="add-username" name="username" required autocomplete="off" value={addValues.username ?? ''} {...invalid('add-username', addAlert, 'username')} />
              <FieldError id="add-username" alert={addAlert} field="username" />
            </div>
            <div>
              <label for="add-level">Access level</label>
              <LevelSelect id="add-level" levels={levels} selected={Number(addValues.access_level) || DEFAULT_APPROVAL_LEVEL} label="Access level" alert={addAlert} />
              <FieldError id="add-level" alert={addAlert} field="access_level" />
            </div>
            <div>
              <label for="add-expires">Expires (optional)</label>
              <ExpiryInput id="add-expires" value={addValues.expires_at} label="Expiry date (optional)" alert={addAlert} earliest={view.earliestExpiry} />
              <FieldError id="add-expires" alert={addAlert} field="expires_at" />
            </div>
          </div>
          <FormError alert={addAlert} fields={['username', 'access_level', 'expires_at']} />
          <div class="actions">
            <button class="primary" type="submit">
              Add member
            </button>
          </div>
        </PostForm>
      ) : null}
    </Section>
  );
};

/**
 * Members of the ancestor groups, who have access here too (GitLab's "Inherited from acme"):
 * each group above with its direct members (20 each), nearest first; a group above that the
 * viewer may not see is left out. Their membership is changed on that group's page.
 */
export const InheritedMembers = async (p: { view: NamespaceView }) => {
  const { view } = p;
  const groups = await Promise.all(
    view.target.ancestorIds.map(async (id) => {
      try {
        return await withNamespace(view.c, KINDS.group, id, async (target) => {
          const [row, members] = await Promise.all([service.describe(view.c.env, KINDS.group, target), service.listMembers(view.c.env, target, windowFor(1))]);
          return { row, members };
        });
      } catch (e) {
        if (e instanceof ApiError && e.status === 404) return null;
        throw e;
      }
    }),
  );
  const shown = groups.filter((g): g is NonNullable<typeof g> => g !== null && g.members.total > 0);
  if (shown.length === 0) return null;
  return (
    <Section id="inherited-members" title="Inherited members">
      <DataTable caption={`Members of the groups above ${view.row.full_path}`} columns={['Member', 'Access', 'Source']}>
        {shown.flatMap(({ row, members }) =>
          members.items.map(({ member, user }) => (
            <tr aria-label={`${user.name} (@${user.username}), inherited from ${row.full_path}`}>
              <td>
                <strong>{user.name}</strong> <span class="muted">@{user.username}</span>
              </td>
              <td>
                <Level value={member.access_level} />
                {member.expires_at ? <div class="muted">until {member.expires_at}</div> : null}
              </td>
              <td>
                Inherited from <a href={tabPath(KINDS.group, pagePathOf(KINDS.group, row.full_path), tabNamed('members'))}>{row.full_path}</a>
                {members.total > members.items.length ? <div class="muted">and {members.total - members.items.length} more there</div> : null}
              </td>
            </tr>
          )),
        )}
      </DataTable>
    </Section>
  );
};

/** The member forms of a group's or project's page. */
export const memberActions = (kind: Kind) =>
  new Hono<ConsoleEnv>()
    .post(`/${ID}/-/members`, formCsrf(), (c) => {
      const values = {
        username: formText(c.var.form, 'username').trim(),
        access_level: formText(c.var.form, 'access_level'),
        expires_at: formText(c.var.form, 'expires_at'),
      };
      return actOn(c, kind, c.var.form, { tab: 'members', form: ADD_FORM, values }, async (target) => {
        const input = parseForm(membership(kind), values);
        const user = (values.username && (await directory(c.env).findUserByUsername(values.username))) || invalidField('username', 'no user has this username');
        const m = await service.addMember(c.env, target, user.id, input.access_level, membershipExpiry(input.expires_at || null));
        return `Added @${m.user.username} to ${target.ref.snapshot.full_path} as ${accessLevelName(m.member.access_level)}.`;
      });
    })
    .post(`/${ID}/-/members/${USER_ID}`, formCsrf(), (c) => {
      const userId = Number(c.req.param('user_id'));
      const values = { access_level: formText(c.var.form, 'access_level'), expires_at: formText(c.var.form, 'expires_at') };
      return actOn(c, kind, c.var.form, { tab: 'members', form: memberForm(userId), values, notFound: 'They are no longer a member.' }, async (target) => {
        const input = parseForm(membership(kind), values);
        const m = await service.updateMember(c.env, target, userId, { accessLevel: input.access_level, expiresAt: membershipExpiry(input.expires_at || null) });
        const until = m.member.expires_at ? `, until ${m.member.expires_at}` : ', with no expiry';
        return `@${m.user.username} is now ${accessLevelName(m.member.access_level)} on ${target.ref.snapshot.full_path}${until}.`;
      });
    })
    .get(`/${ID}/-/members/${USER_ID}/remove`, async (c) => {
      const userId = Number(c.req.param('user_id'));
      const viewer = c.var.viewer;
      const { path, member } = await withNamespace(c, kind, Number(c.req.param('id')), async (target) => {
        const m = await service.getMember(c.env, target, userId);
        const leaving = userId === viewer.user.id;
        if (!leaving && !mayManageMemberAt(kind, await service.standingOn(c.env, target), m.member.access_level)) return raise(problems.forbidden());
        return { path: target.ref.snapshot.full_path, member: m };
      });
      const leaving = userId === viewer.user.id;
      const back = tabPath(kind, pagePathOf(kind, path), tabNamed('members'));
      return c.html(
        <Layout title={leaving ? `Leave ${path}` : 'Remove member'} viewer={viewer}>
          <Confirm
            title={leaving ? `Leave ${path}?` : 'Remove this member?'}
            action={c.req.path}
            csrf={viewer.csrf}
            returnTo={back}
            confirmLabel={leaving ? 'Leave' : `Remove @${member.user.username}`}
          >
            <p>
              {leaving ? 'You' : `${member.user.name} (@${member.user.username})`} will lose the {accessLevelName(member.member.access_level)} access to{' '}
              <strong>{path}</strong> given here. Access through a parent group stays.
            </p>
          </Confirm>
        </Layout>,
      );
    })
    .post(`/${ID}/-/members/${USER_ID}/remove`, formCsrf(), (c) => {
      const userId = Number(c.req.param('user_id'));
      // Who leaves goes to the dashboard: a private group or project is out of their sight now.
      const form = userId === c.var.caller.id ? { ...c.var.form, return_to: '/' } : c.var.form;
      return actOn(c, kind, form, { tab: 'members', form: memberForm(userId), notFound: 'They are no longer a member.' }, async (target) => {
        const user = await directory(c.env).getUser(userId);
        await service.removeMember(c.env, target, userId);
        return userId === c.var.caller.id ? `You left ${target.ref.snapshot.full_path}.` : `Removed @${user?.username ?? userId} from ${target.ref.snapshot.full_path}.`;
      });
    });
