import { describe, expect, it } from 'vitest';
import { accessLevelName, isAccessLevel, levelsAllowedToApprove, mayGrant } from '../../shared/access-levels';

// GitLab's access levels: https://docs.gitlab.com/api/access_requests/#valid-access-levels
const GUEST = 10;
const PLANNER = 15;
const REPORTER = 20;
const DEVELOPER = 30;
const MAINTAINER = 40;
const OWNER = 50;
const MINIMAL = 5;

describe('access levels', () => {
  it('are exactly the values GitLab defines', () => {
    for (const value of [0, 5, 10, 15, 20, 30, 40, 50]) expect(isAccessLevel(value)).toBe(true);
    for (const value of [-1, 1, 25, 45, 60, '30', 30.5, null]) expect(isAccessLevel(value)).toBe(false);
  });

  it('are named as in GitLab, and an unknown one by its number', () => {
    expect([0, 5, 10, 15, 20, 30, 40, 50].map(accessLevelName)).toEqual([
      'No access', 'Minimal access', 'Guest', 'Planner', 'Reporter', 'Developer', 'Maintainer', 'Owner',
    ]);
    expect(accessLevelName(25)).toBe('Level 25');
  });
});

describe('who may grant which level', () => {
  it('a Maintainer may not approve at Owner on a project; an Owner may', () => {
    expect(mayGrant('project', MAINTAINER, OWNER)).toBe(false);
    expect(mayGrant('project', OWNER, OWNER)).toBe(true);
  });

  it('a Maintainer may approve up to Maintainer on a project', () => {
    expect(levelsAllowedToApprove('project', MAINTAINER).map((l) => l.value)).toEqual([GUEST, PLANNER, REPORTER, DEVELOPER, MAINTAINER]);
    expect(levelsAllowedToApprove('project', OWNER).map((l) => l.value)).toEqual([GUEST, PLANNER, REPORTER, DEVELOPER, MAINTAINER, OWNER]);
  });

  it('only an Owner manages a group, and may grant Minimal access there', () => {
    expect(levelsAllowedToApprove('group', MAINTAINER)).toEqual([]);
    expect(levelsAllowedToApprove('group', OWNER).map((l) => l.value)).toEqual([MINIMAL, GUEST, PLANNER, REPORTER, DEVELOPER, MAINTAINER, OWNER]);
  });

  it('never grants Minimal access on a project, No access, or a level GitLab does not have', () => {
    expect(mayGrant('project', OWNER, MINIMAL)).toBe(false);
    expect(mayGrant('group', OWNER, 0)).toBe(false);
    expect(mayGrant('group', OWNER, 25)).toBe(false);
  });

  it('lets nobody below the approver minimum grant anything', () => {
    for (const level of [GUEST, DEVELOPER]) {
      expect(mayGrant('project', DEVELOPER, level)).toBe(false);
      expect(mayGrant('group', MAINTAINER, level)).toBe(false);
    }
  });
});
