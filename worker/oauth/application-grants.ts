import { clientHoldersOf } from '../durable/client-holders';
import { grantsOf } from '../durable/grants';
import type { Env } from '../env';
import { forgetClient } from './clients';

/** Ends every grant any user made to the application, and every token issued under them. */
export const endHoldersGrants = async (env: Env, clientId: string): Promise<void> => {
  const index = clientHoldersOf(env, clientId);
  const holders = await index.list();
  await Promise.all(holders.map((userId) => grantsOf(env, userId).revokeClient(clientId, true)));
  await index.remove(holders);
};

/** A deleted application: this isolate forgets it, and every grant made to it ends. */
export const endApplicationGrants = async (env: Env, clientId: string): Promise<void> => {
  forgetClient(clientId);
  await endHoldersGrants(env, clientId);
};
