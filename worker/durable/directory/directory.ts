import { clock } from '../../clock';
import type { Env } from '../../env';
import { DirectoryApplications } from './applications';
import { FAN_OUT_RETRY_MS } from './fanout-queue';
import { EVENT_RELAY_RETRY_MS, REGISTRY_RETRY_MS } from './registry';

/**
 * The directory: users (and the fan-out of their changes), OAuth applications, personal and
 * impersonation tokens, and the path registry of groups and projects. One instance (named
 * "directory"); SQLite makes every method here atomic. The class is built in layers, one file
 * each (core.ts lists them); here, its alarm. The types it exchanges are in types.ts.
 */
export class Directory extends DirectoryApplications {
  /**
   * One alarm, three kinds of unfinished work: user fan-outs that did not finish (the Worker or an
   * object they called went away), settings events not yet handed to their namespaces, and registry
   * rows not yet copied to their index partitions. Each pass runs all three; the alarm is set again
   * while any has work left.
   */
  async alarm(): Promise<void> {
    const [fanOutsLeft, eventsLeft, registryPushed] = await Promise.all([this.retryFanOuts(), this.relayNamespaceEvents(), this.publishRegistry()]);
    const delays = [fanOutsLeft ? FAN_OUT_RETRY_MS : null, eventsLeft ? EVENT_RELAY_RETRY_MS : null, registryPushed ? null : REGISTRY_RETRY_MS].filter(
      (d): d is number => d !== null,
    );
    if (delays.length > 0) await this.ctx.storage.setAlarm(clock.now() + Math.min(...delays));
  }
}

/** The single Directory instance. */
export const directory = (env: Env) => env.DIRECTORY.getByName('directory');
