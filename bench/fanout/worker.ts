// Bench only (`node bench/fanout.mjs`, docs/performance.md "One copy fewer, measured"): what the
// designs with one copy of a registry row fewer would cost (docs/decisions.md, "Not built yet").
//
// `RegistryPart` holds the Directory's tables (worker/durable/directory/schema.ts): its
// `namespaces`, with the indexes its list queries use, plus one on (kind, name, id) for a list by
// name, which either design would need. The same rows live in one object (`one:<rows>`, the
// Directory today) and spread over PARTS objects by id mod PARTS (`part:<rows>:<p>`, the trees'
// index partitions owning their rows: a project's group falls in its partition).
//
// `GET /one?rows=&order=id|name&offset=`: a page of 20 projects a signed-in non-member may see
// (not private; GitLab's `GET /projects`), with their total and each row's parent, from one
// object. `GET /fan?…`: the same page from the PARTS objects at once, each answering its total and
// its first offset + 20 rows in that order, merged here (`&p=` answers one part's alone: what the
// fan-out would wait for if its calls ran side by side, as on Cloudflare). `order=id` is by id descending (GitLab's
// default for projects, by creation), `name` by name then id.
//
// `POST /decide?asks=0|1`: a minimal access request (an object reads the settings it decides by,
// then writes a row in one transaction), reading them from its own `meta` row (asks=0, the copy
// `Namespace` keeps) or first asking the object that owns the registry row (asks=1, no copy).
import { DurableObject } from 'cloudflare:workers';
import { Hono } from 'hono';
import { DIRECTORY_SCHEMA } from '../../worker/durable/directory/schema';
import { migrate } from '../../worker/durable/migrations';

interface Env {
  REGISTRY: DurableObjectNamespace<RegistryPart>;
  DECIDER: DurableObjectNamespace<Decider>;
}

/** How many objects the rows are spread over, as `DIRECTORY_PARTITIONS` (wrangler.toml) spreads the index partitions. */
const PARTS = 64;
const PER_PAGE = 20;

type Order = 'id' | 'name';

/** A listed row: the registry row's columns and its parent's, as `listNamespaces` selects them. */
export type ListedRow = {
  id: number;
  kind: string;
  name: string;
  path: string;
  full_path: string;
  full_name: string;
  parent_id: number | null;
  visibility: string;
  request_access_enabled: number;
  require_two_factor_authentication: number;
  description: string;
  creator_id: number | null;
  created_at: string;
  version: number;
  p_id: number | null;
  p_name: string | null;
  p_path: string | null;
  p_kind: string | null;
  p_full_path: string | null;
  p_parent_id: number | null;
};

export interface Page {
  total: number;
  rows: ListedRow[];
}

/** The settings a decision reads (`NamespaceSnapshot`). */
type Settings = {
  visibility: string;
  request_access_enabled: number;
  full_path: string;
  name: string;
  version: number;
};

/** The Directory's own tables (its `namespaces`, with their indexes), and an index for a list by name. */
const SCHEMA = [...DIRECTORY_SCHEMA, 'CREATE INDEX namespaces_name ON namespaces (kind, name, id)'];

/**
 * Rows 1..total whose id mod `parts` is `part`, made by one statement. Every fifth run of 64 ids is
 * groups (top level), the rest projects in the nearest group of their partition below them; one
 * row in ten private; names in an order unlike the ids'.
 */
const SEED = `
  WITH RECURSIVE s (i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < ?1),
  r (i, g, parent) AS (
    SELECT i, ((i - 1) / 64) % 5 = 0, i - 64 * (((i - 1) / 64) % 5) FROM s WHERE i % ?2 = ?3
  )
  INSERT INTO namespaces (id, kind, name, path, full_path, full_name, parent_id, visibility, request_access_enabled, description, creator_id, created_at)
  SELECT i, iif(g, 'group', 'project'), printf('%s %08x', iif(g, 'Group', 'Project'), (i * 2654435761) % 4294967296),
         iif(g, 'group-', 'project-') || i,
         iif(g, 'group-' || i, 'group-' || parent || '/project-' || i),
         iif(g, 'Group ' || i, 'Group ' || parent || ' / Project ' || i),
         iif(g, NULL, parent), CASE WHEN i % 10 = 3 THEN 'private' WHEN i % 3 = 0 THEN 'internal' ELSE 'public' END, 1,
         'A namespace of the bench', 1, strftime('%Y-%m-%dT%H:%M:%fZ', 1.7e9 + i, 'unixepoch')
  FROM r`;

const LISTED = "n.kind = 'project' AND n.visibility != 'private'";
const ORDER_BY: Record<Order, string> = { id: 'n.id DESC', name: 'n.name, n.id' };

/** A part of the registry: one object's `namespaces`. */
export class RegistryPart extends DurableObject<Env> {
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    migrate(ctx.storage, SCHEMA);
  }

  /** Fills an empty table with its share of `total` rows; answers how many rows a list matches here. */
  seed(total: number, parts: number, part: number): number {
    const sql = this.ctx.storage.sql;
    if (sql.exec<{ n: number }>('SELECT COUNT(*) AS n FROM namespaces').one().n === 0) {
      sql.exec(SEED, total, parts, part);
      // The rows are pushed nowhere: the registry's outbox (its triggers) is emptied.
      sql.exec('DELETE FROM registry_outbox');
    }
    return sql.exec<{ n: number }>(`SELECT COUNT(*) AS n FROM namespaces n WHERE ${LISTED}`).one().n;
  }

  /** The listed rows' count and `limit` of them from `offset`, as `listNamespaces` reads a page. */
  page(order: Order, offset: number, limit: number): Page {
    const sql = this.ctx.storage.sql;
    const total = sql.exec<{ n: number }>(`SELECT COUNT(*) AS n FROM namespaces n WHERE ${LISTED}`).one().n;
    const rows = sql
      .exec<ListedRow>(
        `SELECT n.id, n.kind, n.name, n.path, n.full_path, n.full_name, n.parent_id, n.visibility, n.request_access_enabled,
                n.require_two_factor_authentication, n.description, n.creator_id, n.created_at, n.version,
                p.id AS p_id, p.name AS p_name, p.path AS p_path, p.kind AS p_kind, p.full_path AS p_full_path, p.parent_id AS p_parent_id
         FROM namespaces n LEFT JOIN namespaces p ON p.id = n.parent_id
         WHERE ${LISTED} ORDER BY ${ORDER_BY[order]} LIMIT ? OFFSET ?`,
        limit,
        offset,
      )
      .toArray();
    return { total, rows };
  }

  /** A registry row's settings by id: what a `Namespace` without its `meta` copy would ask before deciding. */
  settings(id: number): Settings | null {
    return (
      this.ctx.storage.sql
        .exec<Settings>('SELECT visibility, request_access_enabled, full_path, name, version FROM namespaces WHERE id = ?', id)
        .toArray()[0] ?? null
    );
  }
}

/** A group's or project's object, reduced to one decision. */
export class Decider extends DurableObject<Env> {
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    ctx.storage.sql.exec(`
      CREATE TABLE IF NOT EXISTS meta (id INTEGER PRIMARY KEY, registry TEXT NOT NULL, visibility TEXT NOT NULL, request_access_enabled INTEGER NOT NULL,
        full_path TEXT NOT NULL, name TEXT NOT NULL, version INTEGER NOT NULL);
      CREATE TABLE IF NOT EXISTS access_requests (user_id INTEGER PRIMARY KEY, requested_at TEXT NOT NULL);`);
  }

  /** Copies registry row `id`'s settings from the object `registry` into `meta`, as the registry's outbox does. */
  async copy(id: number, registry: string): Promise<void> {
    const s = await this.env.REGISTRY.getByName(registry).settings(id);
    if (!s) throw new Error(`no registry row ${id} in ${registry}`);
    this.ctx.storage.sql.exec('DELETE FROM meta');
    this.ctx.storage.sql.exec(
      'INSERT INTO meta (id, registry, visibility, request_access_enabled, full_path, name, version) VALUES (?, ?, ?, ?, ?, ?, ?)',
      id, registry, s.visibility, s.request_access_enabled, s.full_path, s.name, s.version,
    );
  }

  /** A new requester asks for access, decided on the settings in `meta` or (`asks`) on those the registry's object answers first. */
  async request(asks: boolean): Promise<{ userId: number | null }> {
    const sql = this.ctx.storage.sql;
    const own = sql.exec<Settings & { id: number; registry: string }>('SELECT * FROM meta').one();
    const settings = asks ? await this.env.REGISTRY.getByName(own.registry).settings(own.id) : own;
    return this.ctx.storage.transactionSync(() => {
      if (!settings?.request_access_enabled) return { userId: null };
      return sql.exec<{ userId: number }>('INSERT INTO access_requests (requested_at) VALUES (?) RETURNING user_id AS userId', new Date().toISOString()).one();
    });
  }
}

const before: Record<Order, (a: ListedRow, b: ListedRow) => boolean> = {
  id: (a, b) => a.id > b.id,
  // SQLite's default (BINARY) collation compares as JavaScript's `<` does on these ASCII names.
  name: (a, b) => a.name < b.name || (a.name === b.name && a.id < b.id),
};

/** The page at `offset` of the parts' rows, each part's already in `order`: a merge of their heads. */
const merge = (parts: Page[], order: Order, offset: number): Page => {
  const heads = parts.map(() => 0);
  const rows: ListedRow[] = [];
  while (rows.length < offset + PER_PAGE) {
    let best = -1;
    for (let p = 0; p < parts.length; p++) {
      const row = parts[p].rows[heads[p]];
      if (row && (best < 0 || before[order](row, parts[best].rows[heads[best]]))) best = p;
    }
    if (best < 0) break;
    rows.push(parts[best].rows[heads[best]++]);
  }
  return { total: parts.reduce((n, p) => n + p.total, 0), rows: rows.slice(offset) };
};

const app = new Hono<{ Bindings: Env }>();

const query = (url: string) => {
  const q = new URL(url).searchParams;
  const order: Order = q.get('order') === 'name' ? 'name' : 'id';
  return { rows: Number(q.get('rows')), order, offset: Number(q.get('offset') ?? 0) };
};

app.post('/seed', async (c) => {
  const { rows } = query(c.req.url);
  const [one, ...parts] = await Promise.all([
    c.env.REGISTRY.getByName(`one:${rows}`).seed(rows, 1, 0),
    ...Array.from({ length: PARTS }, (_, p) => c.env.REGISTRY.getByName(`part:${rows}:${p}`).seed(rows, PARTS, p)),
  ]);
  return c.json({ listed: one, listedInParts: parts.reduce((n, k) => n + k, 0) });
});

app.get('/one', async (c) => {
  const { rows, order, offset } = query(c.req.url);
  return c.json(await c.env.REGISTRY.getByName(`one:${rows}`).page(order, offset, PER_PAGE));
});

/** Part `p`'s answer to the fan-out (`p` given), or all PARTS answers merged. */
app.get('/fan', async (c) => {
  const { rows, order, offset } = query(c.req.url);
  const part = (p: number) => c.env.REGISTRY.getByName(`part:${rows}:${p}`).page(order, 0, offset + PER_PAGE);
  const p = c.req.query('p');
  if (p !== undefined) return c.json(await part(Number(p)));
  return c.json(merge(await Promise.all(Array.from({ length: PARTS }, (_, i) => part(i))), order, offset));
});

/** The decisions' project: project 70 (public, requests enabled) of the single object of `rows`, its settings copied once. */
app.post('/decide/setup', async (c) => {
  await c.env.DECIDER.getByName('decider').copy(70, `one:${query(c.req.url).rows}`);
  return c.json({ ok: true });
});

app.post('/decide', async (c) => {
  const asks = new URL(c.req.url).searchParams.get('asks') === '1';
  return c.json(await c.env.DECIDER.getByName('decider').request(asks), 201);
});

export default app;
