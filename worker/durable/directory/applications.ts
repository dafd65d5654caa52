import { isoNow } from '../../clock';
import type { ApplicationRow, NewApplication } from './types';
import { DirectoryUserChanges } from './user-changes';

type RawApplication = Omit<ApplicationRow, 'redirect_uris' | 'scopes' | 'confidential' | 'post_logout_redirect_uris'> & {
  redirect_uris: string;
  post_logout_redirect_uris: string;
  scopes: string;
  confidential: number;
};
const toApplication = (r: RawApplication): ApplicationRow => ({
  id: r.id,
  client_id: r.client_id,
  secret_hash: r.secret_hash,
  name: r.name,
  redirect_uris: JSON.parse(r.redirect_uris),
  scopes: r.scopes.split(' ').filter(Boolean),
  confidential: r.confidential === 1,
  created_at: r.created_at,
  backchannel_logout_uri: r.backchannel_logout_uri,
  post_logout_redirect_uris: JSON.parse(r.post_logout_redirect_uris),
});

/** OAuth applications (GitLab's applications API): the clients the token service knows. */
export abstract class DirectoryApplications extends DirectoryUserChanges {
  createApplication(input: NewApplication): ApplicationRow {
    const row = this.sql
      .exec<RawApplication>(
        `INSERT INTO applications (client_id, secret_hash, name, redirect_uris, scopes, confidential, created_at, backchannel_logout_uri, post_logout_redirect_uris)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING *`,
        input.clientId,
        input.secretHash,
        input.name,
        JSON.stringify(input.redirectUris),
        input.scopes.join(' '),
        input.confidential ? 1 : 0,
        isoNow(),
        input.backchannelLogoutUri,
        JSON.stringify(input.postLogoutRedirectUris),
      )
      .one();
    return toApplication(row);
  }

  listApplications(): ApplicationRow[] {
    return this.sql.exec<RawApplication>('SELECT * FROM applications ORDER BY id').toArray().map(toApplication);
  }

  getApplicationByClientId(clientId: string): ApplicationRow | null {
    const row = this.sql.exec<RawApplication>('SELECT * FROM applications WHERE client_id = ?', clientId).toArray()[0];
    return row ? toApplication(row) : null;
  }

  applicationClientId(id: number): string | null {
    return this.sql.exec<{ client_id: string }>('SELECT client_id FROM applications WHERE id = ?', id).toArray()[0]?.client_id ?? null;
  }

  /** Deletes an application; returns its client id so the caller can end its grants. */
  deleteApplication(id: number): string | null {
    const row = this.sql.exec<{ client_id: string }>('DELETE FROM applications WHERE id = ? RETURNING client_id', id).toArray()[0];
    return row?.client_id ?? null;
  }
}
