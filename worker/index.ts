import { app } from './app';

export { AuditLog } from './durable/audit-log';
export { ClientHolders } from './durable/client-holders';
export { Directory } from './durable/directory';
export { Grants } from './durable/grants';
export { Logins } from './durable/logins';
export { IndexPartition } from './durable/index-partition';
export { Namespace } from './durable/namespace';

export default app;
