import { refreshForm } from './setup.mjs';

/**
 * An autocannon target for refresh-token rotation: C independent chains (one per grant), every
 * request sending the refresh token its chain's previous answer returned. A token whose answer
 * never arrived (the run stopped while it was built or in flight) goes back to the queue when
 * the run ends: both servers answer a retried, unanswered refresh token.
 */
export function refreshChains(url, app, refreshTokens) {
  const queue = [...refreshTokens];
  const unanswered = new Set();
  return {
    url,
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    requests: [
      {
        setupRequest: (req, ctx) => {
          ctx.token = queue.pop() ?? 'exhausted';
          unanswered.add(ctx.token);
          return { ...req, body: new URLSearchParams(refreshForm(app, ctx.token)).toString() };
        },
        onResponse: (status, body, ctx) => {
          unanswered.delete(ctx.token);
          if (status === 200) queue.unshift(JSON.parse(body).refresh_token);
        },
      },
    ],
    after: () => {
      for (const t of unanswered) if (t !== 'exhausted') queue.push(t);
      unanswered.clear();
    },
  };
}

/**
 * The floor of a rotation (the baselines' `POST /rotate`): one call to the object of a chain, which
 * writes two rows and two KV records, spread over as many objects as there are chains.
 */
export function rotationFloor(origin, chains) {
  let n = 0;
  return { url: `${origin}/rotate`, method: 'POST', requests: [{ setupRequest: (req) => ({ ...req, path: `/rotate?chain=${n++ % chains}` }) }] };
}
