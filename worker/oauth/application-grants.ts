import { clientHoldersOf } from '../durable/client-holders/client-holders';
import type { Env } from '../env';
import { forgetClient } from './clients';

/** A deleted application: this isolate forgets it, and every grant made to it ends. */
export const endApplicationGrants = async (env: Env, clientId: string): Promise<void> => {
  forgetClient(clientId);
  await clientHoldersOf(env, clientId).endGrants();
};
