import { DurableObject } from 'cloudflare:workers';
import type { Env } from '../env';

/** One group or project: its members and access requests. */
export class Namespace extends DurableObject<Env> {}
