import { app } from './app';

export { Directory } from './durable/directory';
export { Grants } from './durable/grants';
export { Namespace } from './durable/namespace';

export default app;
