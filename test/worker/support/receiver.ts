import { afterEach } from 'vitest';
import { outbound } from '../../../worker/events/delivery';
import { namespaceStub, runDueAlarms } from './storage';

/** One request a webhook receiver got. */
export interface Delivery {
  url: string;
  headers: Record<string, string>;
  body: string;
  json: Record<string, unknown>;
  redirect: Request['redirect'];
  signal: AbortSignal;
}

const realFetch = outbound.fetch;
afterEach(() => {
  outbound.fetch = realFetch;
});

/**
 * A webhook receiver inside the test: it takes the place of the network for the Worker's
 * webhook and back-channel logout deliveries (`outbound.fetch`) until the test ends, records every request, and answers
 * as `respond` says (200 by default).
 */
export class Receiver {
  readonly received: Delivery[] = [];
  respond: (d: Delivery) => Response | Promise<Response> = () => new Response('ok');

  constructor() {
    outbound.fetch = async (request) => {
      const body = await request.text();
      const d: Delivery = {
        url: request.url,
        headers: Object.fromEntries(request.headers),
        body,
        // Webhooks send JSON; back-channel logout tokens come as a form.
        json: body && request.headers.get('Content-Type')?.includes('json') ? (JSON.parse(body) as Record<string, unknown>) : {},
        redirect: request.redirect,
        signal: request.signal,
      };
      this.received.push(d);
      return this.respond(d);
    };
  }

  /** The payloads received, in order, as `event_name` and `action`. */
  events(): string[] {
    return this.received.map((d) => `${d.json.event_name} ${d.json.action}`);
  }
}

/** Runs the due alarms of these groups' and projects' objects, in order (a project before its groups). */
export const settle = async (...ids: number[]): Promise<void> => {
  for (const id of ids) await runDueAlarms(namespaceStub(id));
};
