import { app } from './app';

export { ClientHolders } from './durable/client-holders';
export { Directory } from './durable/directory';
export { Grants } from './durable/grants';
export { Namespace } from './durable/namespace';

export default app;
