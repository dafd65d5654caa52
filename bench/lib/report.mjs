// The bench's output: one table with each figure's goal beside it, the scale line, the popup's
// size; the same as JSON; and an SVG chart of the ratios.

const fmt = (n, digits = 0) => (Number.isFinite(n) ? n.toFixed(digits) : '—');
const ratio = (n) => (Number.isFinite(n) ? `${n.toFixed(2)}×` : '—');
const pad = (s, n) => String(s).padEnd(n);
const trips = (t) => (t ? `KV ${t.kv.length}, DO ${t.do.length}` : '—');
const lpad = (s, n) => String(s).padStart(n);

/** A goal: `figure` is a ratio (or bytes), `op` '>=' or '<='. */
export const verdict = (value, op, target) =>
  !Number.isFinite(value) ? 'n/a' : (op === '>=' ? value >= target : value <= target) ? 'MET' : 'NOT MET';

const goalText = (g) => (g ? `${g.op === '>=' ? '≥' : '≤'}${g.target} ${g.verdict}` : '');

export function renderTable(results) {
  const lines = [];
  const w = { name: 52, rps: 8, p: 8, trips: 14, ratio: 22 };
  lines.push(
    `${pad('Scenario', w.name)}${lpad('req/s', w.rps)}${lpad('p50 ms', w.p)}${lpad('p99 ms', w.p)}   ${pad('round trips', w.trips)}${pad('vs baseline (goal)', w.ratio + 4)}${pad('vs peer (goal)', w.ratio)}`,
  );
  lines.push('-'.repeat(w.name + w.rps + 2 * w.p + 3 + w.trips + 2 * w.ratio + 4));
  for (const s of results.scenarios) {
    if (!s.available) {
      lines.push(`${pad(s.label, w.name)}not available: ${s.reason}`);
      continue;
    }
    const vsBase = s.baseline ? `${ratio(s.ratioToBaseline)} ${s.baselineShort} ${goalText(s.goalBaseline)}` : '—';
    const vsPeer = s.peer ? `${ratio(s.ratioToPeer)} ${goalText(s.goalPeer)}` : '—';
    lines.push(
      `${pad(s.label, w.name)}${lpad(fmt(s.rps), w.rps)}${lpad(fmt(s.p50, 2), w.p)}${lpad(fmt(s.p99, 2), w.p)}   ${pad(trips(s.roundTrips), w.trips)}${pad(vsBase, w.ratio + 4)}${pad(vsPeer, w.ratio)}`,
    );
  }
  const notes = results.scenarios.filter((s) => s.available && s.note);
  if (notes.length) lines.push('', ...notes.map((s) => `  ${s.label}: ${s.note}`));
  lines.push('', 'Round trips: storage calls the Worker makes for one request (one cycle for request + approve), counted on the same state.');
  lines.push('');
  const sc = results.scale;
  if (sc.available) {
    const cells = sc.points.map((p) => `${p.pending.toLocaleString('en-US')}: p50 ${fmt(p.p50, 2)} ms (${ratio(p.ratio)})`);
    lines.push(`Scale — list page of 20, p50 latency by pending requests in one project: ${cells.join(', ')}`);
    const [first, last] = [sc.points[0], sc.points[sc.points.length - 1]];
    lines.push(`        ${last.pending.toLocaleString('en-US')} vs ${first.pending.toLocaleString('en-US')}: ${ratio(sc.ratio)} (goal ≤${sc.goal.target}× ${sc.goal.verdict})`);
  } else if (sc.reason !== 'not run') {
    lines.push(`Scale — not available: ${sc.reason}`);
  }
  const ib = results.inbox;
  if (ib?.available) {
    const r = ib.ratios;
    lines.push(
      `Inbox — owner of ${ib.sources.toLocaleString('en-US')} groups and projects, ${ib.pending} pending: p50 inbox ${fmt(ib.p50.inbox, 2)} ms, one list ${fmt(ib.p50.list, 2)} ms (${ratio(r.inboxToList)}), 304 poll ${fmt(ib.p50.notModified, 2)} ms vs GET /user ${fmt(ib.p50.user, 2)} ms (${ratio(r.notModifiedToUser)})`,
    );
    lines.push(
      `        whole poll, one client: old way ${ib.polls.old.requests} requests, p50 ${fmt(ib.polls.old.p50, 1)} ms; inbox 1 request, p50 ${fmt(ib.polls.inbox.p50, 2)} ms (${fmt(r.oldWayToInbox, 0)}× faster)`,
    );
    lines.push(
      `        inbox p50 at ${ib.scale.small.toLocaleString('en-US')} managed projects ${fmt(ib.scale.p50Small, 2)} ms, at ${ib.scale.large.toLocaleString('en-US')} ${fmt(ib.scale.p50Large, 2)} ms (${ratio(r.largeToSmall)})`,
    );
  } else if (ib && ib.reason !== 'not run') {
    lines.push(`Inbox — not available: ${ib.reason}`);
  }
  lines.push(...renderPartitions(results.partitions));
  const sat = results.webhooksSaturated;
  if (sat) {
    lines.push(
      `Approve as fast as answers come: ${fmt(sat.plainRps)} req/s (p50 ${fmt(sat.plainP50, 1)} ms) without webhooks, ${fmt(sat.hookedRps)} req/s (p50 ${fmt(sat.hookedP50, 1)} ms) with them — each delivery is an HTTP request made by the same workerd`,
    );
  }
  const wh = results.webhooks;
  if (wh?.available) {
    lines.push(`Webhooks — one project's object, ${wh.hooks} hooks on a local receiver: a backlog of ${wh.backlog} deliveries drained in ${fmt(wh.seconds, 1)} s, ${fmt(wh.perSecond)} deliveries/s`);
  } else if (wh && wh.reason !== 'not run') {
    lines.push(`Webhooks — not available: ${wh.reason}`);
  }
  const pp = results.popup;
  if (pp.available) {
    lines.push(`Popup JavaScript, gzipped: ${(pp.bytes / 1000).toFixed(2)} kB in ${pp.files.length} file(s) (goal ≤${pp.goal.target / 1000} kB ${pp.goal.verdict})`);
  } else if (pp.reason !== 'not run') {
    lines.push(`Popup JavaScript — not available: ${pp.reason}`);
  }
  return lines.join('\n');
}

const escape = (s) => String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** A horizontal bar per goal: the measured ratio, the goal as a tick, green when met. */
export function renderSvg(results) {
  const rows = results.goals.filter((g) => Number.isFinite(g.value));
  const max = Math.max(2, ...rows.map((g) => Math.min(g.value, 4)), ...rows.map((g) => g.target));
  const left = 330;
  const width = 820;
  const barW = width - left - 90;
  const rowH = 34;
  const top = 58;
  const height = top + rows.length * rowH + 40;
  const x = (v) => left + (Math.min(v, max) / max) * barW;
  const out = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="system-ui, -apple-system, Segoe UI, sans-serif" font-size="13">`,
    `<rect width="100%" height="100%" fill="#ffffff"/>`,
    `<text x="16" y="24" font-size="16" font-weight="600">Knock bench — ratios measured side by side in one run</text>`,
    `<text x="16" y="44" fill="#555">${escape(`${results.settings.connections} connections, ${results.settings.durationSeconds} s per scenario, ${results.machine.cpus} CPUs, ${results.generatedAt.slice(0, 16).replace('T', ' ')} UTC. Tick = goal; green = met.`)}</text>`,
  ];
  for (let i = 0; i <= Math.floor(max); i++) {
    out.push(`<line x1="${x(i)}" y1="${top - 6}" x2="${x(i)}" y2="${height - 34}" stroke="#e5e5e5"/>`);
    out.push(`<text x="${x(i)}" y="${height - 18}" text-anchor="middle" fill="#777">${i}×</text>`);
  }
  rows.forEach((g, i) => {
    const y = top + i * rowH;
    const met = g.verdict === 'MET';
    out.push(`<text x="${left - 10}" y="${y + 17}" text-anchor="end">${escape(g.figure)}</text>`);
    out.push(`<rect x="${left}" y="${y + 4}" width="${Math.max(1, x(g.value) - left)}" height="18" rx="3" fill="${met ? '#2f9e44' : '#e03131'}"/>`);
    out.push(`<line x1="${x(g.target)}" y1="${y}" x2="${x(g.target)}" y2="${y + 26}" stroke="#111" stroke-width="2"/>`);
    out.push(`<text x="${Math.min(x(g.value), left + barW) + 6}" y="${y + 17}">${escape(`${g.value.toFixed(2)}× (${g.op === '>=' ? '≥' : '≤'}${g.target})`)}</text>`);
  });
  out.push('</svg>');
  return out.join('\n') + '\n';
}

/** The partitions scenarios (issue 16): one object's ceiling, calls per object, latency by users. */
function renderPartitions(pt) {
  if (!pt?.available) return pt && pt.reason !== 'not run' ? [`Past one object — not available: ${pt.reason}`] : [];
  const lines = [`Past one object — ${pt.partitions} partitions`];
  const c = pt.ceiling;
  if (c?.available) {
    lines.push(`        one object on this machine: ${fmt(c.echoPerSecond)} trivial calls/s, ${fmt(c.signInsPerSecond)} sign-ins/s through it`);
    const pr = pt.projection;
    if (pr) {
      lines.push(
        `        projected sign-ins/s: one Directory ${fmt(pr.oneDirectorySignInsPerSecond)}; sign-in state in ${pt.partitions} partitions by name ${fmt(pr.partitionedSignInsPerSecond)} (the busiest partition gets ${(100 * pr.busiestPartitionShare).toFixed(2)}% of the names)`,
      );
    }
  } else if (c) lines.push(`        ceiling — not available: ${c.reason}`);
  const m = pt.mixed;
  if (m?.available) {
    const ops = Object.entries(m.operations).map(([k, v]) => `${k} ${v}`).join(', ');
    lines.push(`        mixed workload (${ops}): ${m.totalCalls} object calls to ${m.objects} objects`);
    lines.push(`        by class: ${Object.entries(m.byClass).sort((a, b) => b[1].calls - a[1].calls).map(([k, v]) => `${k} ${v.calls} (${v.objects} objects)`).join(', ')}`);
    lines.push(`        busiest: ${m.top.slice(0, 3).map((o) => `${o.object} ${(100 * (o.calls / m.totalCalls)).toFixed(1)}%`).join(', ')}`);
  } else if (m) lines.push(`        calls per object — not available: ${m.reason}`);
  const s = pt.scale;
  if (s?.available) {
    lines.push(`        p50 at ${s.usersSmall.toLocaleString('en-US')} → ${s.usersLarge.toLocaleString('en-US')} users (up to ${s.samples} requests each):`);
    for (const [op, v] of Object.entries(s.ops)) {
      const few = v.samplesLarge < s.samples ? `  (${v.samplesLarge} requests in the time allowed)` : '';
      lines.push(`          ${pad(op, 14)} ${lpad(fmt(v.p50Small, 2), 8)} ms → ${lpad(fmt(v.p50Large, 2), 8)} ms  ${ratio(v.ratio)}${few}`);
    }
  } else if (s) lines.push(`        latency by users — not available: ${s.reason}`);
  return lines;
}
