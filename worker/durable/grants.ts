import { DurableObject } from 'cloudflare:workers';
import type { Env } from '../env';

/** The grant authority (codes, refresh rotation, revocation): see the token service. */
export class Grants extends DurableObject<Env> {}
