import { grantsOf, holderIndexOf } from '../durable/grants';
import type { Env } from '../env';
import { forgetClient } from './clients';

/** Ends every grant made to a deleted application, and every token issued under them. */
export const endApplicationGrants = async (env: Env, clientId: string): Promise<void> => {
  forgetClient(clientId);
  const index = holderIndexOf(env, clientId);
  const holders = await index.holders();
  await Promise.all(holders.map((userId) => grantsOf(env, userId).revokeClient(clientId, true)));
  await index.clearHolders();
};
