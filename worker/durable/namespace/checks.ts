import { OWNER } from '../../../shared/access-levels';
import { directStanding, KINDS, maySee, type Standing } from '../../auth/policy';
import { clock } from '../../clock';
import type { EventEntity } from '../../events/event';
import { problems } from '../../errors';
import { fail, ok, type Result } from '../result';
import { MEMBER_COLUMNS, membership, STALE, unnamed, type Settings } from './core';
import { NamespaceReplication } from './replication';
import { NO_RULES, type StoredRules } from './request-rules';
import { namespaceObject, type Actor, type GroupMembership, type MemberRow, type NamespaceRef, type Stale } from './types';

/**
 * What runs before each rule of a group's or project's object: the object made ready for the
 * call (`ready`), and where the caller stands in it, direct and inherited (`standing`).
 */
export abstract class NamespaceChecks extends NamespaceReplication {
  /**
   * Before each rule: the first call records which namespace this is and makes its creator Owner
   * (idempotent); a newer registry snapshot is taken; a deleted object, or a full path from a
   * cache older than the object's copy, answers `Stale`; members whose date has come are removed.
   */
  protected async ready(ref: NamespaceRef, fresh = false): Promise<Result<Settings> | Stale> {
    if (!this.load()) {
      // Set up by its creation's call, with the row the registry just made (`fresh`). Any other
      // first call follows a crash before that one, and may carry an older copy of the row than a
      // change the registry pushed meanwhile to an object not yet set up: so the registry is asked.
      const row = fresh ? ref.snapshot : await this.registryRow(ref);
      // Another first call may have set the object up while this one waited for the registry.
      if (this.load()) return this.ready(row !== null && row.version > ref.snapshot.version ? { ...ref, snapshot: row } : ref);
      if (row === null) {
        this.sql.exec('INSERT INTO meta (singleton, namespace_id, kind, deleted) VALUES (1, ?, ?, 1)', ref.id, ref.kind);
        this.load();
        return STALE;
      }
      if (row.version > ref.snapshot.version) ref = { ...ref, snapshot: row };
      const entity: EventEntity = { id: ref.id, kind: ref.kind, full_path: ref.snapshot.full_path, name: ref.snapshot.name, visibility: ref.snapshot.visibility };
      this.mutate(() => {
        this.sql.exec('INSERT INTO meta (singleton, namespace_id, kind) VALUES (1, ?, ?)', ref.id, ref.kind);
        if (ref.creatorId !== null) {
          const creator = this.sql
            .exec<MemberRow>(`INSERT INTO members (user_id, access_level, created_at) VALUES (?, ?, ?) RETURNING ${MEMBER_COLUMNS}`, ref.creatorId, OWNER, ref.createdAt)
            .one();
          const user = unnamed(ref.creatorId);
          this.record({ action: 'added', author: user, user, ...membership(creator) }, entity);
        }
        return ok(null);
      });
      this.namespaceId = ref.id;
      this.kind = ref.kind;
      if (ref.ancestorIds) this.rememberTree(ref.ancestorIds);
      this.takeSnapshot(ref.snapshot);
      await this.push();
    }
    if (this.namespaceId !== ref.id) throw new Error(`namespace object ${this.namespaceId} called as ${ref.id}`);
    if (ref.ancestorIds && this.treeIds === null) this.rememberTree(ref.ancestorIds);
    const settings = this.takeSnapshot(ref.snapshot);
    if (settings.deleted) return STALE;
    if (ref.byPath && ref.snapshot.version < settings.version) return STALE;
    const expiry = this.earliestExpiry();
    if (expiry !== null && expiry <= clock.now()) {
      this.expireDue();
      await this.push();
    }
    return ok(settings);
  }

  /**
   * Where the caller stands here. The inherited level is as given; or taken as 0 without asking,
   * when the direct standing already satisfies `settles` (policy predicates only turn true as the
   * level rises, see `directStanding`); or else asked of each ancestor group's own object, the
   * authority on its members (one call each, at once), and the highest taken. `settles` must
   * imply every check the operation then makes, so each comes out as it would with the real
   * inherited level. Callers apply the rule in the same synchronous turn as this returns in.
   */
  protected async standing(actor: Actor, settles: (s: Standing) => boolean): Promise<Standing> {
    const direct = directStanding(actor.admin, this.directLevel(actor.userId));
    if (typeof actor.inherited === 'number') return { ...direct, inherited: actor.inherited };
    if (settles(direct)) return direct;
    const memberships = await Promise.all(actor.inherited.ancestorIds.map((id) => namespaceObject(this.env, id).directMembershipOf(actor.userId)));
    const inherited = Math.max(0, ...memberships.map((m) => m.level));
    // Other calls may have run while this one waited: read direct membership again.
    return { ...directStanding(actor.admin, this.directLevel(actor.userId)), inherited };
  }

  /**
   * `standing`, and the access request rules in force here: its own, or else the nearest
   * ancestor group's (`inheritedFrom`: that group's full path). The rules come with the levels in the
   * same calls to the ancestor groups (`directMembershipOf`), so a request whose requester's
   * inherited level must be asked anyway costs no more calls; a group or project with its own
   * rules asks none for them.
   */
  protected async standingAndRules(actor: Actor, settles: (s: Standing) => boolean): Promise<{ standing: Standing; rules: StoredRules; inheritedFrom: string | null }> {
    const own = this.ownRules();
    const direct = directStanding(actor.admin, this.directLevel(actor.userId));
    const settled = typeof actor.inherited === 'number' || settles(direct);
    const known = typeof actor.inherited === 'number' ? { ...direct, inherited: actor.inherited } : direct;
    if (own && settled) return { standing: known, rules: own, inheritedFrom: null };
    const ids = typeof actor.inherited === 'number' ? await this.ancestorGroups() : actor.inherited.ancestorIds;
    const found = await Promise.all(ids.map((id) => namespaceObject(this.env, id).directMembershipOf(actor.userId)));
    const nearest = found.find((m) => m.rules);
    const rules = own ?? nearest?.rules ?? NO_RULES;
    const inheritedFrom = own ? null : (nearest?.fullPath ?? null);
    if (settled) return { standing: known, rules, inheritedFrom };
    // Other calls may have run while this one waited: read direct membership again.
    const inherited = Math.max(0, ...found.map((m) => m.level));
    return { standing: { ...directStanding(actor.admin, this.directLevel(actor.userId)), inherited }, rules, inheritedFrom };
  }

  /** This group's or project's own access request rules; null when it inherits them. */
  protected ownRules(): StoredRules | null {
    const stored = this.sql.exec<{ rules: string | null }>('SELECT rules FROM meta').one().rules;
    return stored === null ? null : (JSON.parse(stored) as StoredRules);
  }

  /**
   * `ready`, then the caller may see it (else 404 Group/Project Not Found) and `may` holds (else
   * 403); their standing. `settles` is as for `standing`: by default `may` itself.
   */
  protected async permitted(ref: NamespaceRef, actor: Actor, may: (s: Standing) => boolean, settles = may): Promise<Result<Standing> | Stale> {
    const here = await this.ready(ref);
    if (!here.ok) return here;
    const standing = await this.standing(actor, settles);
    if (!maySee(here.value.visibility, standing)) return fail(KINDS[ref.kind].notFound());
    if (!may(standing)) return fail(problems.forbidden());
    return ok(standing);
  }

  /**
   * The highest membership `userId` holds in the groups above this one (GitLab's
   * `highest_group_member`), asked of each group's own object at once; null when they hold none,
   * or when none could be above `level` (Owner) and there is nothing to ask.
   */
  protected async inheritedMembership(userId: number, level: number): Promise<GroupMembership | null> {
    if (level >= OWNER) return null;
    const ancestors = await this.ancestorGroups();
    const found = await Promise.all(ancestors.map((id) => namespaceObject(this.env, id).directMembershipOf(userId)));
    return found.reduce<GroupMembership | null>((best, m) => (m.level > (best?.level ?? 0) ? m : best), null);
  }
}
