import { env } from 'cloudflare:workers';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { errorShapeProblem, expectError } from './support/contract';
import { indexedMembership, indexedPendingRequests } from './support/indexes';
import { ADMIN, api, Browser, call, jsonBody, unique, type TestUser } from './support/http';
import { authorizeCode, exchange, pkcePair, refresh, registerApp, tokenCall, whoAmI, type Tokens } from './support/oauth';
import { objectGate } from './support/object-gate';
import { quickUser } from './support/world';

vi.setConfig({ testTimeout: 60_000 });

/**
 * How many times each race is run; every run must have exactly one winner. Two, so what the trial
 * alternates (form and JSON bodies, confidential and public clients, the revocation's place among
 * the refreshes) is run both ways: in 5 trials of each race below, the same contender won every
 * time (MEMBER_TRIALS says why).
 */
const TRIALS = 2;
let trials = 0;
afterAll(() => console.log(`races: ${trials} trials`));

type Kind = 'groups' | 'projects';
const KINDS: Kind[] = ['groups', 'projects'];

const root = api(ADMIN);

const expectContractError = async (res: Response) => {
  expect(res.status).toBeGreaterThanOrEqual(400);
  expect(res.status).toBeLessThan(500);
  expect(res.headers.get('content-type')).toBe('application/json');
  expect(errorShapeProblem(await res.json())).toBeNull();
};

const ids = async (res: Response) => {
  expect(res.status).toBe(200);
  return ((await res.json()) as { id: number; access_level?: number }[]).map((x) => x.id);
};

const createIn = async (owner: TestUser, kind: Kind, body: Record<string, unknown> = {}) => {
  const path = unique('race');
  const res = await api(owner).post(`/${kind}`, { name: path, path, visibility: 'public', ...body });
  expect(res.status, await res.clone().text()).toBe(201);
  return (await res.json()) as { id: number };
};

/** A group, or a project in a group of the same owner; `rootId`, the top-level group of its tree. */
const source = async (kind: Kind, owner: TestUser): Promise<{ id: number; rootId: number }> => {
  const group = await createIn(owner, 'groups');
  return kind === 'groups' ? { id: group.id, rootId: group.id } : { id: (await createIn(owner, 'projects', { namespace_id: group.id })).id, rootId: group.id };
};

describe.each(KINDS)('races on %s access requests', (kind) => {
  let owner: TestUser;
  let instanceAdmin: TestUser;
  let id: number;

  beforeAll(async () => {
    owner = await quickUser('rown');
    instanceAdmin = await quickUser('radm', { admin: true });
    id = (await source(kind, owner)).id;
  });

  const pendingRequester = async () => {
    const user = await quickUser('rreq');
    expect((await api(user).post(`/${kind}/${id}/access_requests`)).status).toBe(201);
    return user;
  };

  // Six trials: each of the six contenders decides first once.
  it(`approve at several levels vs deny vs withdraw: exactly one winner, each contender once (6 trials)`, async () => {
    const won: string[] = [];
    for (let trial = 0; trial < 6; trial++) {
      trials++;
      const requester = await pendingRequester();
      const path = `/${kind}/${id}/access_requests/${requester.id}`;
      const contenders: [string, () => Promise<Response>][] = [
        ['approve 10 by owner', () => api(owner).put(`${path}/approve?access_level=10`)],
        ['approve 40 by admin', () => api(instanceAdmin).put(`${path}/approve?access_level=40`)],
        ['approve 20 by root', () => root.put(`${path}/approve?access_level=20`)],
        ['deny by owner', () => api(owner).delete(path)],
        ['withdraw', () => api(requester).delete(path)],
        ['approve default by owner', () => api(owner).put(`${path}/approve`)],
      ];
      // Each contender is held in the object once it knows where its caller stands, just before
      // it decides (the race's window); the trial's own contender goes on first, and the moment
      // its transaction commits all the others go on at once.
      const gate = objectGate(env.NAMESPACES.getByName(String(id)) as unknown as DurableObjectStub);
      let answers: Response[];
      try {
        await gate.hold('standing', 'after');
        const sent: Promise<Response>[] = [];
        for (const [i, [name, send]] of contenders.entries()) {
          sent.push(send());
          const early = await Promise.race([gate.held(i).then(() => null), sent[i].then((r) => r.status)]);
          expect(early, `${name} answered before it was held`).toBeNull();
        }
        await gate.releaseAfterNextTransaction(...contenders.map((_, i) => i).filter((i) => i !== trial));
        await gate.release(trial);
        answers = await Promise.all(sent);
      } finally {
        await gate.open();
      }
      const winners = answers.flatMap((r, i) => (r.status === 201 || r.status === 204 ? [i] : []));
      expect(winners.map((i) => contenders[i][0])).toEqual([contenders[trial][0]]);
      for (const [i, loser] of answers.entries()) if (i !== trial) await expectError(loser, 404, { message: '404 Not found' });

      const [winnerName] = contenders[trial];
      const winner = answers[trial];
      won.push(winnerName);
      const members = (await (await root.get(`/${kind}/${id}/members?per_page=100`)).json()) as { id: number; access_level: number }[];
      const pending = await ids(await root.get(`/${kind}/${id}/access_requests?per_page=100`));
      expect(pending).not.toContain(requester.id);
      const member = members.find((m) => m.id === requester.id);
      if (winner.status === 201) {
        const level = Number(/approve (\d+|default)/.exec(winnerName)![1].replace('default', '30'));
        expect(member?.access_level).toBe(level);
        expect(((await winner.json()) as { access_level: number }).access_level).toBe(level);
      } else {
        expect(member).toBeUndefined();
      }
    }
    // Approvals at every level, the deny and the withdrawal each won once.
    expect(won.sort()).toEqual(['approve 10 by owner', 'approve 20 by root', 'approve 40 by admin', 'approve default by owner', 'deny by owner', 'withdraw']);
  });

  it(`20 simultaneous requests by one user leave one request (${TRIALS} trials)`, async () => {
    for (let trial = 0; trial < TRIALS; trial++) {
      trials++;
      const user = await quickUser('rrep');
      const answers = await Promise.all(Array.from({ length: 20 }, () => api(user).post(`/${kind}/${id}/access_requests`)));
      expect(answers.filter((r) => r.status === 201)).toHaveLength(1);
      for (const r of answers.filter((r) => r.status !== 201)) await expectError(r, 400, { message: { user_id: ['already exists in source'] } });
      const pending = await ids(await root.get(`/${kind}/${id}/access_requests?per_page=100`));
      expect(pending.filter((p) => p === user.id)).toHaveLength(1);
    }
  });

  it(`a request racing its own approval and a second request never leaves member and requester at once (${TRIALS} trials)`, async () => {
    for (let trial = 0; trial < TRIALS; trial++) {
      trials++;
      const requester = await pendingRequester();
      const path = `/${kind}/${id}/access_requests`;
      const [approved, again, third] = await Promise.all([
        api(owner).put(`${path}/${requester.id}/approve`),
        api(requester).post(path),
        api(requester).post(path),
      ]);
      expect(approved.status).toBe(201);
      // The second and third requests either found the request pending (400) or the member (403).
      for (const r of [again, third]) {
        expect([400, 403]).toContain(r.status);
        await expectContractError(r);
      }
      const members = await ids(await root.get(`/${kind}/${id}/members?per_page=100`));
      const pending = await ids(await root.get(`/${kind}/${id}/access_requests?per_page=100`));
      expect(members).toContain(requester.id);
      expect(pending).not.toContain(requester.id);
    }
  });
});

describe('approvals at two levels of the hierarchy', () => {
  // Three trials: each of the three orders of levels once.
  it(`approving one user on a group and on its subgroup and project at once: each once, members/all lists them once at the highest level (3 trials)`, async () => {
    const owner = await quickUser('rtwo');
    for (let trial = 0; trial < 3; trial++) {
      trials++;
      const top = await createIn(owner, 'groups');
      const sub = await createIn(owner, 'groups', { parent_id: top.id });
      const app = await createIn(owner, 'projects', { namespace_id: sub.id });
      const user = await quickUser('rlvl');
      for (const path of [`/groups/${top.id}`, `/groups/${sub.id}`, `/projects/${app.id}`]) {
        expect((await api(user).post(`${path}/access_requests`)).status).toBe(201);
      }
      const levels = [[20, 40, 30], [40, 20, 10], [10, 30, 40]][trial % 3];
      const answers = await Promise.all([
        root.put(`/groups/${top.id}/access_requests/${user.id}/approve?access_level=${levels[0]}`),
        api(owner).put(`/groups/${sub.id}/access_requests/${user.id}/approve?access_level=${levels[1]}`),
        api(owner).put(`/projects/${app.id}/access_requests/${user.id}/approve?access_level=${levels[2]}`),
        // A second approval of each, at another level: it must lose.
        api(owner).put(`/groups/${top.id}/access_requests/${user.id}/approve?access_level=50`),
        root.put(`/groups/${sub.id}/access_requests/${user.id}/approve?access_level=50`),
        root.put(`/projects/${app.id}/access_requests/${user.id}/approve?access_level=50`),
      ]);
      const statuses = answers.map((r) => r.status);
      for (let i = 0; i < 3; i++) {
        expect([statuses[i], statuses[i + 3]].sort()).toEqual([201, 404]);
      }
      const granted = [0, 1, 2].map((i) => (statuses[i] === 201 ? levels[i] : 50));
      const all = (await (await root.get(`/projects/${app.id}/members/all?per_page=100`)).json()) as { id: number; access_level: number }[];
      const mine = all.filter((m) => m.id === user.id);
      expect(mine).toHaveLength(1);
      expect(mine[0].access_level).toBe(Math.max(...granted));
      for (const path of [`/groups/${top.id}`, `/groups/${sub.id}`, `/projects/${app.id}`]) {
        expect(await ids(await root.get(`${path}/access_requests?per_page=100`))).not.toContain(user.id);
      }
    }
  });
});

/**
 * Members races: each is run this many times, and every run must end in one consistent state.
 * In workerd under test, the Worker and its objects share one thread, so which contender arrives
 * first follows from the start order and the work on each path, not from chance: 50 trials of
 * each race below (and of the blocking races) ended the same way every time, for each start
 * order. Two run each start order once; a race with one start order runs twice (the second
 * trial on the state the first left).
 */
const MEMBER_TRIALS = 2;

/** The object's direct level and the membership index's (its tree's partition) must agree (0 for none). */
const agreedLevel = async (kind: Kind, target: { id: number; rootId: number }, userId: number): Promise<number> => {
  // The member by id: the source gathers more members than one page holds over the trials.
  const member = await root.get(`/${kind}/${target.id}/members/${userId}`);
  const direct = member.status === 404 ? 0 : ((await member.json()) as { access_level: number }).access_level;
  const indexed = (await indexedMembership(target.id, userId, target.rootId))?.access_level ?? 0;
  expect(indexed).toBe(direct);
  return direct;
};

describe.each(KINDS)('races on %s members', (kind) => {
  let owner: TestUser;
  let target: { id: number; rootId: number };
  let id: number;

  beforeAll(async () => {
    owner = await quickUser('rmown');
    target = await source(kind, owner);
    id = target.id;
  });

  const pendingRequester = async () => {
    const user = await quickUser('rmreq');
    expect((await api(user).post(`/${kind}/${id}/access_requests`)).status).toBe(201);
    return user;
  };

  it(`removing a member while their request is approved: the later one decides (${MEMBER_TRIALS} trials)`, async () => {
    for (let trial = 0; trial < MEMBER_TRIALS; trial++) {
      trials++;
      const user = await pendingRequester();
      const remove = () => api(owner).delete(`/${kind}/${id}/members/${user.id}`);
      const approve = () => root.put(`/${kind}/${id}/access_requests/${user.id}/approve?access_level=30`);
      const [removed, approved] = trial % 2 ? await Promise.all([remove(), approve()]) : (await Promise.all([approve(), remove()])).reverse();
      expect(approved.status).toBe(201);
      const level = await agreedLevel(kind, target, user.id);
      if (removed.status === 204) expect(level).toBe(0);
      else {
        await expectError(removed, 404, { message: '404 Member Not Found' });
        expect(level).toBe(30);
      }
      expect(await ids(await root.get(`/${kind}/${id}/access_requests?per_page=100`))).not.toContain(user.id);
    }
  });

  it(`demoting a member while their request is approved: one order, fully applied (${MEMBER_TRIALS} trials)`, async () => {
    for (let trial = 0; trial < MEMBER_TRIALS; trial++) {
      trials++;
      const user = await pendingRequester();
      const demote = () => root.put(`/${kind}/${id}/members/${user.id}`, { access_level: 20 });
      const approve = () => api(owner).put(`/${kind}/${id}/access_requests/${user.id}/approve?access_level=40`);
      const [demoted, approved] = trial % 2 ? await Promise.all([demote(), approve()]) : (await Promise.all([approve(), demote()])).reverse();
      expect(approved.status).toBe(201);
      const level = await agreedLevel(kind, target, user.id);
      if (demoted.status === 200) expect(level).toBe(20);
      else {
        await expectError(demoted, 404, { message: '404 Member Not Found' });
        expect(level).toBe(40);
      }
    }
  });
});

describe('the last two Owners of a group', () => {
  it(`demoting each other at once: exactly one succeeds and the group keeps an Owner (${MEMBER_TRIALS} trials)`, async () => {
    const [a, b] = await Promise.all([quickUser('rlo'), quickUser('rlo')]);
    const group = await createIn(a, 'groups');
    expect((await root.post(`/groups/${group.id}/members`, { user_id: b.id, access_level: 50 })).status).toBe(201);
    for (let trial = 0; trial < MEMBER_TRIALS; trial++) {
      trials++;
      const answers = await Promise.all([
        api(a).put(`/groups/${group.id}/members/${b.id}`, { access_level: 40 }),
        api(b).put(`/groups/${group.id}/members/${a.id}`, { access_level: 40 }),
      ]);
      expect(answers.map((r) => r.status).sort()).toEqual([200, 403]);
      const loser = answers.find((r) => r.status === 403)!;
      await expectContractError(loser);
      const tree = { id: group.id, rootId: group.id };
      const levels = [await agreedLevel('groups', tree, a.id), await agreedLevel('groups', tree, b.id)];
      expect([...levels].sort()).toEqual([40, 50]);
      // Two Owners again for the next trial.
      const demoted = levels[0] === 40 ? a : b;
      expect((await root.put(`/groups/${group.id}/members/${demoted.id}`, { access_level: 50 })).status).toBe(200);
    }
  });
});

describe('a path renamed while it is looked up', () => {
  it(`lookups by the old and new path each see the group before or after, never anything else (${MEMBER_TRIALS} trials)`, async () => {
    const owner = await quickUser('rren');
    for (let trial = 0; trial < MEMBER_TRIALS; trial++) {
      trials++;
      const group = (await createIn(owner, 'groups')) as { id: number; full_path: string };
      const next = unique('rnew');
      // Known to this isolate by its old path.
      expect((await api(owner).get(`/groups/${encodeURIComponent(group.full_path)}`)).status).toBe(200);
      const [renamed, byOld, byNew, oldMembers] = await Promise.all([
        api(owner).put(`/groups/${group.id}`, { path: next }),
        api(owner).get(`/groups/${encodeURIComponent(group.full_path)}`),
        api(owner).get(`/groups/${encodeURIComponent(next)}`),
        api(owner).get(`/groups/${encodeURIComponent(group.full_path)}/members`),
      ]);
      expect(renamed.status).toBe(200);
      for (const r of [byOld, byNew, oldMembers]) {
        if (r.status === 200) {
          const body = (await r.json()) as { id?: number; full_path?: string } | { id: number }[];
          if (!Array.isArray(body)) {
            expect(body.id).toBe(group.id);
            expect([group.full_path, next]).toContain(body.full_path);
          }
        } else await expectError(r, 404, { message: '404 Group Not Found' });
      }
      // Once the rename has answered, only the new path works.
      await expectError(await api(owner).get(`/groups/${encodeURIComponent(group.full_path)}`), 404, { message: '404 Group Not Found' });
      expect(((await (await api(owner).get(`/groups/${encodeURIComponent(next)}`)).json()) as { id: number }).id).toBe(group.id);
    }
  });
});

describe('one path, many creators', () => {
  it(`8 simultaneous creations of one group, subgroup or project path: exactly one 201 (${TRIALS * 3} trials)`, async () => {
    const creators = await Promise.all(Array.from({ length: 8 }, () => quickUser('rpath')));
    const parent = await createIn(creators[0], 'groups');
    // Everyone may create inside the parent: make them all Owners of it.
    for (const c of creators.slice(1)) {
      expect((await api(c).post(`/groups/${parent.id}/access_requests`)).status).toBe(201);
      expect((await root.put(`/groups/${parent.id}/access_requests/${c.id}/approve?access_level=50`)).status).toBe(201);
    }
    const shapes: [Kind, Record<string, unknown>][] = [['groups', {}], ['groups', { parent_id: parent.id }], ['projects', { namespace_id: parent.id }]];
    for (let trial = 0; trial < TRIALS; trial++) {
      for (const [kind, where] of shapes) {
        trials++;
        const path = unique('same');
        const spelled = (i: number) => (i % 2 ? path.toUpperCase() : path);
        const answers = await Promise.all(creators.map((c, i) => api(c).post(`/${kind}`, { name: spelled(i), path: spelled(i), ...where })));
        expect(answers.filter((r) => r.status === 201)).toHaveLength(1);
        for (const r of answers.filter((r) => r.status !== 201)) await expectError(r, 400, { message: { path: ['has already been taken'] } });
        const listed = (await (await root.get(`/${kind}?search=${path}&per_page=100`)).json()) as { path: string }[];
        expect(listed.filter((g) => g.path.toLowerCase() === path.toLowerCase())).toHaveLength(1);
      }
    }
  });
});

describe('sign-ups', () => {
  it(`8 simultaneous sign-ups with one username through the sign-up page: one account, one session (${TRIALS} trials)`, async () => {
    for (let trial = 0; trial < TRIALS; trial++) {
      trials++;
      const username = unique('signup');
      const browsers = Array.from({ length: 8 }, () => new Browser());
      const tokens = await Promise.all(browsers.map(async (b) => Browser.csrf(await (await b.get('/users/sign_up')).text())));
      const answers = await Promise.all(
        browsers.map((b, i) =>
          b.post('/users/sign_up', { name: `Racer ${i}`, username: i % 2 ? username.toUpperCase() : username, password: `password-${i}-long`, authenticity_token: tokens[i] }),
        ),
      );
      const winners = answers.filter((r) => r.status === 303);
      expect(winners).toHaveLength(1);
      for (const r of answers.filter((r) => r.status !== 303)) {
        expect(r.status).toBe(409);
        expect(await r.text()).toContain('Username has already been taken');
      }
      expect(browsers.filter((b) => b.cookies.has('knock_session'))).toHaveLength(1);
      const found = (await (await root.get(`/users?username=${username}`)).json()) as unknown[];
      expect(found).toHaveLength(1);
    }
  });
});

describe('sign-in throttling under concurrency', () => {
  it('30 simultaneous wrong passwords for one username get no more than 10 verdicts before the lock', async () => {
    trials++;
    const victim = await createUserWithPassword();
    const answers = await Promise.all(
      Array.from({ length: 30 }, async (_, i) => {
        const b = new Browser();
        const page = await b.get('/users/sign_in');
        return b.post('/users/sign_in', { username: victim.username, password: `guess-${i}-wrong`, authenticity_token: Browser.csrf(await page.text()) });
      }),
    );
    const statuses = answers.map((r) => r.status);
    expect(statuses.filter((s) => s === 401).length).toBeLessThanOrEqual(10);
    expect(statuses.filter((s) => s !== 401).every((s) => s === 429)).toBe(true);
    const b = new Browser();
    expect((await b.signIn(victim)).status).toBe(429);
  });
});

const createUserWithPassword = async () => {
  const username = unique('victim');
  const password = `pw-${username}-secret`;
  const res = await call('/api/v4/users', jsonBody({ username, name: username, password }, ADMIN));
  expect(res.status).toBe(201);
  return { username, password };
};

describe('token storms', () => {
  const grant = async (opts: { confidential: boolean }) => {
    const app = await registerApp({ confidential: opts.confidential });
    const user = await quickUserWithPassword();
    const browser = new Browser();
    await browser.signIn(user);
    const pkce = await pkcePair();
    const { code } = await authorizeCode(browser, app, { code_challenge: pkce.challenge, code_challenge_method: 'S256' });
    return { app, code, verifier: pkce.verifier };
  };

  it.each([true, false])(`50 simultaneous redemptions of one code (confidential: %s): one pair, then revoked as replayed (${TRIALS} trials)`, async (confidential) => {
    for (let trial = 0; trial < TRIALS; trial++) {
      trials++;
      const { app, code, verifier } = await grant({ confidential });
      const body = { client_id: app.clientId, ...(app.secret ? { client_secret: app.secret } : {}), code, code_verifier: verifier, redirect_uri: app.redirectUri };
      const answers = await Promise.all(Array.from({ length: 50 }, () => tokenCall(body, { form: trial % 2 === 0 })));
      const ok = answers.filter((r) => r.status === 200);
      expect(ok).toHaveLength(1);
      for (const r of answers.filter((r) => r.status !== 200)) await expectError(r, 400, expect.objectContaining({ error: 'invalid_grant' }));
      const winner = (await ok[0].json()) as Tokens;
      // The 49 others were replays of a used code: the pair issued from it is revoked too.
      expect((await whoAmI(winner.access_token)).status).toBe(401);
      expect((await refresh(app, winner.refresh_token)).status).toBe(400);
    }
  });

  it(`50 simultaneous refreshes of one token: one new pair, the same for all (a lost answer is retried) (${TRIALS} trials)`, async () => {
    for (let trial = 0; trial < TRIALS; trial++) {
      trials++;
      const { app, code, verifier } = await grant({ confidential: trial % 2 === 0 });
      const first = await exchange(app, code, { code_verifier: verifier });
      const answers = await Promise.all(Array.from({ length: 50 }, () => refresh(app, first.refresh_token)));
      for (const r of answers) expect(r.status).toBe(200);
      const pairs = (await Promise.all(answers.map((r) => r.json()))) as Tokens[];
      expect(new Set(pairs.map((p) => p.access_token)).size).toBe(1);
      expect(new Set(pairs.map((p) => p.refresh_token)).size).toBe(1);
      expect((await whoAmI(pairs[0].access_token)).status).toBe(200);
      expect((await whoAmI(first.access_token)).status).toBe(401);
      // The successor rotates once more; then the first token is a reuse and ends the grant.
      const next = await refresh(app, pairs[0].refresh_token);
      expect(next.status).toBe(200);
      const third = (await next.json()) as Tokens;
      await expectError(await refresh(app, first.refresh_token), 400, expect.objectContaining({ error: 'invalid_grant' }));
      expect((await whoAmI(third.access_token)).status).toBe(401);
    }
  });

  it(`refreshes racing a revocation of the grant: whatever wins, no token of the grant works afterwards (${TRIALS} trials)`, async () => {
    for (let trial = 0; trial < TRIALS; trial++) {
      trials++;
      const { app, code, verifier } = await grant({ confidential: true });
      const first = await exchange(app, code, { code_verifier: verifier });
      const revoke = () =>
        call('/login/oauth/revoke', {
          method: 'POST',
          headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({ client_id: app.clientId, client_secret: app.secret!, token: first.refresh_token }).toString(),
        });
      const calls = Array.from({ length: 20 }, (_, i) => (i === trial * 3 ? revoke() : refresh(app, first.refresh_token)));
      const answers = await Promise.all(calls);
      const issued: Tokens[] = [];
      for (const r of answers) {
        if (r.status === 200 && r.headers.get('content-type') === 'application/json') issued.push((await r.json()) as Tokens);
        else if (r.status !== 200) await expectError(r, 400, expect.objectContaining({ error: 'invalid_grant' }));
      }
      for (const t of [first, ...issued]) {
        expect((await whoAmI(t.access_token)).status).toBe(401);
        expect((await refresh(app, t.refresh_token)).status).toBe(400);
      }
    }
  });
});

const quickUserWithPassword = async () => {
  const u = await createUserWithPassword();
  const found = (await (await root.get(`/users?username=${u.username}`)).json()) as { id: number }[];
  return { id: found[0].id, ...u };
};

/**
 * Blocking races: each is run this many times, which starts the block at each of its points once
 * (once the refresh loop has rotated 0 to 3 times; first, second or third of three contenders):
 * MEMBER_TRIALS says why more trials show nothing more.
 */
const BLOCK_TRIALS = 4;

describe('a user blocked while they act', () => {
  it(`block while the user refreshes in a loop: each refresh wins before the block or is refused after it; no token works once the block has answered (${BLOCK_TRIALS} trials)`, async () => {
    const app = await registerApp({ confidential: true });
    const before: number[] = [];
    for (let trial = 0; trial < BLOCK_TRIALS; trial++) {
      trials++;
      const user = await quickUserWithPassword();
      const browser = new Browser();
      expect((await browser.signIn(user)).status).toBe(303);
      const first = await exchange(app, (await authorizeCode(browser, app)).code);
      const held: Tokens[] = [first];
      let blockAnswered = false;
      // The block starts once the loop has rotated 0 to 3 times, by trial.
      let startBlock = () => {};
      const blockMayStart = new Promise<void>((resolve) => (startBlock = resolve));
      // The user rotates their refresh token as fast as they can until refused.
      const loop = async () => {
        for (let step = 0; step < 100; step++) {
          if (step === trial % 4) startBlock();
          const r = await refresh(app, held[held.length - 1].refresh_token);
          if (r.status !== 200) {
            await expectError(r, 400, expect.objectContaining({ error: 'invalid_grant' }));
            return;
          }
          const pair = (await r.json()) as Tokens;
          held.push(pair);
          // A pair answered after the block must already be dead.
          if (blockAnswered) expect((await whoAmI(pair.access_token)).status).toBe(401);
        }
        throw new Error('the refresh loop was never refused');
      };
      const block = async () => {
        const r = await root.post(`/users/${user.id}/block`);
        blockAnswered = true;
        expect(r.status).toBe(201);
        expect(await r.json()).toBe(true);
        for (const t of held) expect((await whoAmI(t.access_token)).status).toBe(401);
      };
      await Promise.all([loop(), blockMayStart.then(block)]);
      before.push(held.length - 1);
      for (const t of held) {
        expect((await whoAmI(t.access_token)).status).toBe(401);
        await expectError(await refresh(app, t.refresh_token), 400, expect.objectContaining({ error: 'invalid_grant' }));
      }
    }
    console.log(`block vs refresh loop: refreshes that won before the block, per trial: ${before.join(' ')}`);
  });

  it(`block, a new impersonation token and an access request at once: once the block has answered, no token works and no request is pending (${BLOCK_TRIALS} trials)`, async () => {
    const owner = await quickUser('rbown');
    const group = await createIn(owner, 'groups');
    for (let trial = 0; trial < BLOCK_TRIALS; trial++) {
      trials++;
      const user = await quickUser('rblk');
      const contenders = [
        () => root.post(`/users/${user.id}/block`),
        () => root.post(`/users/${user.id}/impersonation_tokens`, { name: 'racing', scopes: ['api'] }),
        () => api(user).post(`/groups/${group.id}/access_requests`),
      ];
      // Rotate who starts first.
      const started: Promise<Response>[] = [];
      for (let i = 0; i < contenders.length; i++) {
        const k = (i + trial) % contenders.length;
        started[k] = contenders[k]();
      }
      const [blocked, issued, requested] = await Promise.all(started);
      expect(blocked.status).toBe(201);
      // Issued before the block (then ended by it), or refused because the user was blocked.
      expect([201, 404]).toContain(issued.status);
      expect([201, 401]).toContain(requested.status);
      const tokens = [user.headers, ...(issued.status === 201 ? [{ 'PRIVATE-TOKEN': ((await issued.json()) as { token: string }).token }] : [])];
      for (const headers of tokens) expect((await api(headers).get('/user')).status).toBe(401);
      expect(await ids(await api(owner).get(`/groups/${group.id}/access_requests?per_page=100`))).not.toContain(user.id);
      expect(await indexedPendingRequests(user.id)).toEqual([]);
    }
  });
});
