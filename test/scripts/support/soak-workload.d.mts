// Types of soak-workload.mjs (plain ESM, so that `npm run soak` runs it in Node without a build).
export interface SoakStats {
  /** Requests sent, setup and checks included. */
  requests: number;
  /** `label status` (or `ERROR label`) → how many. */
  byOutcome: Map<string, number>;
  /** The first errors, each a sentence. */
  errors: string[];
  /** Milliseconds per answered request, in the order they were sent. */
  latencies: number[];
}

export interface Soak {
  stats: SoakStats;
  setUp(): Promise<void>;
  /** The workload, until `stopAt` (ms since the epoch). */
  run(stopAt: number): Promise<void>;
  /** The acknowledged writes that are not there, each a sentence; none when nothing was lost. */
  verify(): Promise<string[]>;
  acknowledged(): { requests: number; approvals: number; ends: number };
}

export function createSoak(options: {
  base: string;
  adminToken: string;
  users: number;
  owners?: number;
  prefix?: string;
  seed?: number;
  staggerMs?: number;
  log?: (msg: string) => void;
}): Soak;
