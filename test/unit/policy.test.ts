import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  directStanding,
  effectiveLevel,
  hasAccess,
  isGrantableLevel,
  KINDS,
  mayCreateIn,
  mayGrantLevel,
  mayManageRequests,
  maySee,
  visibilityAllowedUnder,
  type Standing,
} from '../../worker/auth/policy';

// GitLab's roles and permissions: https://docs.gitlab.com/user/permissions/
const { group, project } = KINDS;
const member = (direct: number, inherited = 0): Standing => ({ admin: false, direct, inherited });
const ADMIN: Standing = { admin: true, direct: 0, inherited: 0 };
const STRANGER = member(0);

describe('effective access', () => {
  it('is the higher of direct and inherited membership', () => {
    expect(effectiveLevel(member(20, 40))).toBe(40);
    expect(effectiveLevel(member(30, 10))).toBe(30);
  });

  it('is Owner for an administrator without any membership', () => {
    expect(effectiveLevel(ADMIN)).toBe(50);
    expect(hasAccess(ADMIN)).toBe(true);
    expect(hasAccess(STRANGER)).toBe(false);
  });
});

describe('managing access requests', () => {
  it('a project needs a Maintainer, direct or through a parent group', () => {
    expect(mayManageRequests(project, member(40))).toBe(true);
    expect(mayManageRequests(project, member(0, 40))).toBe(true);
    expect(mayManageRequests(project, member(30))).toBe(false);
  });

  it('a group needs an Owner', () => {
    expect(mayManageRequests(group, member(40))).toBe(false);
    expect(mayManageRequests(group, member(0, 50))).toBe(true);
    expect(mayManageRequests(group, ADMIN)).toBe(true);
  });

  it('a Maintainer may not approve at Owner on a project', () => {
    expect(mayGrantLevel(project, member(40), 50)).toBe(false);
    expect(mayGrantLevel(project, member(40), 40)).toBe(true);
    expect(mayGrantLevel(project, member(0, 50), 50)).toBe(true);
    expect(mayGrantLevel(project, ADMIN, 50)).toBe(true);
  });

  it('a level nobody may grant on a kind is a bad parameter, whoever asks', () => {
    expect(isGrantableLevel(project, 5)).toBe(false);
    expect(isGrantableLevel(group, 5)).toBe(true);
    expect(isGrantableLevel(group, 0)).toBe(false);
    expect(isGrantableLevel(project, 35)).toBe(false);
    expect(isGrantableLevel(project, 50)).toBe(true);
  });
});

describe('seeing and creating', () => {
  it('private needs a membership; internal and public are visible to every signed-in caller', () => {
    expect(maySee('private', STRANGER)).toBe(false);
    expect(maySee('private', member(0, 10))).toBe(true);
    expect(maySee('internal', STRANGER)).toBe(true);
    expect(maySee('public', STRANGER)).toBe(true);
  });

  it('a project in a group needs a Maintainer of the group; a subgroup needs an Owner', () => {
    expect(mayCreateIn(project, member(40))).toBe(true);
    expect(mayCreateIn(project, member(30))).toBe(false);
    expect(mayCreateIn(group, member(40))).toBe(false);
    expect(mayCreateIn(group, member(50))).toBe(true);
  });

  it('nothing is more visible than the group it lives in', () => {
    expect(visibilityAllowedUnder('public', 'private')).toBe(false);
    expect(visibilityAllowedUnder('internal', 'private')).toBe(false);
    expect(visibilityAllowedUnder('public', 'internal')).toBe(false);
    expect(visibilityAllowedUnder('private', 'public')).toBe(true);
    expect(visibilityAllowedUnder('internal', 'internal')).toBe(true);
  });
});

describe('the direct standing shortcut', () => {
  const levels = fc.constantFrom(0, 5, 10, 15, 20, 30, 40, 50);
  it('a rule that allows on direct membership alone allows whatever ancestor groups add', () => {
    fc.assert(
      fc.property(fc.boolean(), levels, levels, levels, fc.constantFrom(group, project), (admin, direct, inherited, level, kind) => {
        const before = directStanding(admin, direct);
        const after: Standing = { admin, direct, inherited };
        const rules = [
          (s: Standing) => maySee('private', s),
          (s: Standing) => mayManageRequests(kind, s),
          (s: Standing) => mayGrantLevel(kind, s, level),
          (s: Standing) => hasAccess(s),
          (s: Standing) => mayCreateIn(kind, s),
        ];
        for (const rule of rules) if (rule(before)) expect(rule(after)).toBe(true);
      }),
    );
  });
});
