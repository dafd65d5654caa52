// Issue 25's speed goals (`BENCH_ONLY=rules`): request + approve on a project whose group has
// access request rules (a reason required, two approvals counted, an auto-approve entry that does
// not match) against one without rules, and a request an auto-approve rule grants at once against
// a plain request. Latency per call, the two sides of each pair measured interleaved.
import { call } from './http.mjs';
import { CONNECTIONS, ROUNDS, measurePair } from './load.mjs';
import { seedUsers } from './setup.mjs';

const bearer = (token) => ({ authorization: `Bearer ${token}` });
const JSON_HEADERS = { 'content-type': 'application/json' };

async function group(knock, token, path, body = {}) {
  const { json } = await call(`${knock}/api/v4/groups`, { method: 'POST', token, body: { name: path, path, visibility: 'public', ...body }, expect: 201 });
  return json.id;
}

async function project(knock, token, path, namespaceId) {
  const { json } = await call(`${knock}/api/v4/projects`, { method: 'POST', token, body: { name: path, path, visibility: 'public', namespace_id: namespaceId }, expect: 201 });
  return json.id;
}

const rules = (knock, token, kind, id, body) => call(`${knock}/api/v4/${kind}/${id}/access_request_rules`, { method: 'PUT', token, body, expect: 200 });

/** Each cycle takes a fresh requester from `pool`: their request, then each approver's approval. */
function cycle(knock, base, pool, approvers, requestBody) {
  const none = { id: 0, token: 'exhausted' };
  return {
    url: knock,
    requests: [
      {
        method: 'POST',
        path: base,
        setupRequest: (req, ctx) => {
          ctx.user = pool.length ? pool.pop() : none;
          return { ...req, headers: { ...bearer(ctx.user.token), ...(requestBody ? JSON_HEADERS : {}) }, ...(requestBody ? { body: JSON.stringify(requestBody) } : {}) };
        },
      },
      ...approvers.map((approver) => ({
        method: 'PUT',
        path: base,
        setupRequest: (req, ctx) => ({ ...req, path: `${base}/${ctx.user.id}/approve`, headers: bearer(approver.token), body: undefined }),
      })),
    ],
  };
}

export async function ruleScenarios({ urls, cycles, warm, log }) {
  const knock = urls.knock;
  const slack = 2 * CONNECTIONS * (ROUNDS + 1);
  const [owner, coOwner] = await seedUsers(urls.seeder, 'rules-own', 0, 2, { tokens: true });
  // Each scenario in a tree of its own (its own index partition's share), with the same two Owners,
  // so the two sides of a pair differ only by the rules.
  const [plainGroup, ruledGroup, askGroup, autoGroup] = await Promise.all(['plain', 'ruled', 'ask', 'auto'].map((g) => group(knock, owner.token, `rules-${g}`)));
  for (const g of [plainGroup, ruledGroup, askGroup, autoGroup]) {
    await call(`${knock}/api/v4/groups/${g}/access_requests`, { method: 'POST', token: coOwner.token, expect: 201 });
    await call(`${knock}/api/v4/groups/${g}/access_requests/${coOwner.id}/approve?access_level=50`, { method: 'PUT', token: owner.token, expect: 201 });
  }
  await rules(knock, owner.token, 'groups', ruledGroup, { reason_required: true, approvals_required: 2, auto_approve: [{ email_domain: 'nobody.invalid' }] });
  const plainProject = await project(knock, owner.token, 'rules-plain-p', plainGroup);
  const ruledProject = await project(knock, owner.token, 'rules-ruled-p', ruledGroup);
  const plainAsk = await project(knock, owner.token, 'rules-ask-p', askGroup);
  const autoProject = await project(knock, owner.token, 'rules-auto-p', autoGroup);
  await rules(knock, owner.token, 'projects', autoProject, { auto_approve: [{ max_access_level: 30 }] });
  // Both sides of a pair send the same number of calls: 3 per cycle with two approvals, 2 without,
  // so the side without rules needs half as many cycles again (each cycle a fresh requester).
  const size = Math.ceil(1.5 * (cycles + warm)) + slack;
  const pools = await Promise.all(['plain', 'ruled', 'ask', 'auto'].map((p, i) => seedUsers(urls.seeder, `rules-${p}`, (i + 1) * 100000, size, { tokens: true })));
  log(`rules: 4 groups with a project each, 2 Owners of each, ${4 * size} requesters`);

  const base = (id) => `/api/v4/projects/${id}/access_requests`;
  // Two approvals (202, then 201) against one; per call, the requests' latency.
  const plainCycle = cycle(knock, base(plainProject), pools[0], [owner]);
  const ruledCycle = cycle(knock, base(ruledProject), pools[1], [owner, coOwner], { reason: 'bench' });
  const pair = await measurePair(plainCycle, ruledCycle, { amount: 3 * cycles, warmupAmount: 3 * warm });
  log(`  request + approve, no rules: p50 ${pair.a.p50.toFixed(2)} ms; with the group's rules: p50 ${pair.b.p50.toFixed(2)} ms`);
  const single = (id, pool) => cycle(knock, base(id), pool, []);
  const asks = await measurePair(single(plainAsk, pools[2]), single(autoProject, pools[3]), { amount: cycles, warmupAmount: warm });
  log(`  plain request: p50 ${asks.a.p50.toFixed(2)} ms; auto-approved request: p50 ${asks.b.p50.toFixed(2)} ms`);
  const failed = pair.a.failed + pair.b.failed + asks.a.failed + asks.b.failed;
  return {
    available: true,
    cycles,
    failed,
    requestApprove: { plain: pair.a, ruled: pair.b },
    request: { plain: asks.a, autoApproved: asks.b },
    ratios: { ruledToPlain: pair.b.p50 / pair.a.p50, autoToPlain: asks.b.p50 / asks.a.p50 },
  };
}
