import type { AuditEvent } from '../../../shared/api-types';
import { presentAuditEvent } from '../../api/presenters/audit-event';
import { mayManageEvents } from '../../auth/policy';
import * as events from '../../services/events';
import { DataTable, Pagination, pageNumber, Section, When, windowFor } from '../components';
import type { NamespaceView } from './view';

/** What an audit event did, in words, from the API's details. */
const changeText = (d: AuditEvent['details']): string => {
  const expiry = d.expiry_to ? ` until ${d.expiry_to}` : '';
  if (d.add === 'user_access') return `Added as ${d.as ?? 'member'}${expiry}`;
  if (d.add === 'hook') return 'Added the webhook';
  if (d.change) return `Changed ${d.change.replace(/_/g, ' ')} from ${d.from || 'nothing'} to ${d.to || 'nothing'}${d.change === 'access_level' ? expiry : ''}`;
  if (d.custom_message) return d.custom_message;
  if (d.remove === 'user_access') return 'Removed user access';
  if (d.remove === 'hook') return 'Removed the webhook';
  return d.action;
};

/** The audit log of a group (with everything in it) or project, newest first, for those who may read it. */
export const AuditLog = async (p: { view: NamespaceView }) => {
  const { view } = p;
  if (!mayManageEvents(view.kind, view.standing)) return null;
  const page = pageNumber(view.c.req.query('audit_page'));
  const { total, items } = await events.listAuditEvents(view.c.env, view.target, {}, windowFor(page));
  return (
    <Section id="audit-log" title={`Audit log (${total})`}>
      {items.length === 0 ? (
        <p class="muted">Nothing has happened here yet.</p>
      ) : (
        <DataTable caption="Audit events, newest first" columns={['Time', 'Author', 'Action', 'Target']}>
          {items.map(presentAuditEvent).map((e) => (
            <tr>
              <td>
                <When iso={e.created_at} />
              </td>
              <td>{e.details.author_name}</td>
              <td>
                {changeText(e.details)} <span class="muted">({e.event_name})</span>
              </td>
              <td>
                {e.details.target_details}
                {e.details.entity_path !== view.row.full_path ? <span class="muted"> in {e.details.entity_path}</span> : null}
              </td>
            </tr>
          ))}
        </DataTable>
      )}
      <Pagination url={view.url} param="audit_page" page={page} total={total} label="audit events" />
    </Section>
  );
};

