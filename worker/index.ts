import { app } from './app';
import type { Env } from './env';
import { publishedDocument } from './oauth/published';

export { AuditLog } from './durable/audit-log/audit-log';
export { ClientHolders } from './durable/client-holders/client-holders';
export { Directory } from './durable/directory/directory';
export { User } from './durable/user/user';
export { SignIn } from './durable/sign-in/sign-in';
export { IndexPartition } from './durable/index-partition/index-partition';
export { Namespace } from './durable/namespace/namespace';
export { SigningKeys } from './durable/signing-keys/signing-keys';
export { DeviceAuthorizations } from './durable/device-authorizations/device-authorizations';

export default {
  fetch: (request: Request, env: Env, ctx: ExecutionContext): Response | Promise<Response> => publishedDocument(request, env) ?? app.fetch(request, env, ctx),
};
