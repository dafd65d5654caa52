// The JSON shapes of Knock's API as TypeScript types, derived from the schemas in schemas.ts.
// Types only: importing this module brings no code (and no zod) into a bundle.

import type { z } from 'zod';
import type * as S from './schemas';

export type { NamespaceKind } from './access-levels';

export type Visibility = z.infer<typeof S.VisibilitySchema>;
export type UserBasic = z.infer<typeof S.UserBasicSchema>;
export type User = z.infer<typeof S.UserSchema>;
export type AccessRequest = z.infer<typeof S.AccessRequestSchema>;
export type Member = z.infer<typeof S.MemberSchema>;
export type InboxAccessRequest = z.infer<typeof S.InboxAccessRequestSchema>;
export type OwnAccessRequest = z.infer<typeof S.OwnAccessRequestSchema>;
export type AccessAlert = z.infer<typeof S.AccessAlertSchema>;
export type SourceType = z.infer<typeof S.SourceTypeSchema>;
export type ApprovedAccessRequest = z.infer<typeof S.ApprovedAccessRequestSchema>;
export type RuleApprovedAccessRequest = z.infer<typeof S.RuleApprovedAccessRequestSchema>;
export type AccessRequestRules = z.infer<typeof S.AccessRequestRulesSchema>;
export type Group = z.infer<typeof S.GroupSchema>;
export type Project = z.infer<typeof S.ProjectSchema>;
export type TokenResponse = z.infer<typeof S.TokenResponseSchema>;
export type PersonalAccessToken = z.infer<typeof S.PersonalAccessTokenSchema>;
export type ImpersonationToken = z.infer<typeof S.ImpersonationTokenSchema>;
export type Application = z.infer<typeof S.ApplicationSchema>;
export type AuditEvent = z.infer<typeof S.AuditEventSchema>;
export type GroupHook = z.infer<typeof S.GroupHookSchema>;
export type ProjectHook = z.infer<typeof S.ProjectHookSchema>;
export type HookEvent = z.infer<typeof S.HookEventSchema>;

/** Error bodies: `{"message": ...}` on the API, `{"error", "error_description"}` from OAuth. */
export interface ErrorBody {
  message?: unknown;
  error?: string;
  error_description?: string;
}
