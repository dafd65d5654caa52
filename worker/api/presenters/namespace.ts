import { z } from '@hono/zod-openapi';
import type { NamespaceParent, NamespaceRow } from '../../durable/namespace-registry';

const parentWebUrl = (p: NamespaceParent, origin: string) =>
  p.kind === 'group' ? `${origin}/groups/${p.full_path}` : `${origin}/${encodeURIComponent(p.path)}`;

export const GroupSchema = z
  .object({
    id: z.number().int(),
    web_url: z.string(),
    name: z.string(),
    path: z.string(),
    description: z.string(),
    visibility: z.enum(['private', 'internal', 'public']),
    full_name: z.string(),
    full_path: z.string(),
    parent_id: z.number().int().nullable(),
    request_access_enabled: z.boolean(),
    avatar_url: z.string().nullable(),
    created_at: z.string(),
  })
  .openapi('Group');

export const ProjectSchema = z
  .object({
    id: z.number().int(),
    description: z.string(),
    name: z.string(),
    name_with_namespace: z.string(),
    path: z.string(),
    path_with_namespace: z.string(),
    created_at: z.string(),
    web_url: z.string(),
    avatar_url: z.string().nullable(),
    visibility: z.enum(['private', 'internal', 'public']),
    request_access_enabled: z.boolean(),
    namespace: z.object({
      id: z.number().int(),
      name: z.string(),
      path: z.string(),
      kind: z.enum(['group', 'user']),
      full_path: z.string(),
      parent_id: z.number().int().nullable(),
      avatar_url: z.string().nullable(),
      web_url: z.string(),
    }),
  })
  .openapi('Project');

export const presentGroup = (g: NamespaceRow, origin: string) => ({
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
  avatar_url: null,
  created_at: g.created_at,
});

export const presentProject = (p: NamespaceRow, origin: string) => {
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
