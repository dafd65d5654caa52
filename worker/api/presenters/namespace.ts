import type { Group, Project } from '../../../shared/api-types';
import type { NamespaceParent, NamespaceRow } from '../../durable/namespace-registry';

const parentWebUrl = (p: NamespaceParent, origin: string) =>
  p.kind === 'group' ? `${origin}/groups/${p.full_path}` : `${origin}/${encodeURIComponent(p.path)}`;

export { GroupSchema, ProjectSchema } from '../../../shared/schemas';

export const presentGroup = (g: NamespaceRow, origin: string): Group => ({
  id: g.id,
  web_url: `${origin}/groups/${g.full_path}`,
  name: g.name,
  path: g.path,
  description: g.description,
  visibility: g.visibility,
  full_name: g.full_name,
  full_path: g.full_path,
  parent_id: g.parent_id,
  request_access_enabled: g.request_access_enabled,
  require_two_factor_authentication: g.require_two_factor_authentication,
  avatar_url: null,
  created_at: g.created_at,
});

export const presentProject = (p: NamespaceRow, origin: string): Project => {
  const ns = p.parent!;
  return {
    id: p.id,
    description: p.description,
    name: p.name,
    name_with_namespace: p.full_name,
    path: p.path,
    path_with_namespace: p.full_path,
    created_at: p.created_at,
    web_url: `${origin}/${p.full_path}`,
    avatar_url: null,
    visibility: p.visibility,
    request_access_enabled: p.request_access_enabled,
    namespace: {
      id: ns.id,
      name: ns.name,
      path: ns.path,
      kind: ns.kind,
      full_path: ns.full_path,
      parent_id: ns.parent_id,
      avatar_url: null,
      web_url: parentWebUrl(ns, origin),
    },
  };
};
