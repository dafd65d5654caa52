// Which changes of a user's groups count as losing what a token's group claims named (the rule
// that sends a back-channel logout, worker/durable/user/group-claims.ts `claimsLost`).
import { describe, expect, it } from 'vitest';
import { claimsLost } from '../../worker/durable/user/group-claims';
import type { GroupClaims } from '../../worker/store/tokens';

const claims = (c: Partial<GroupClaims>): GroupClaims => ({ groups: [], groups_direct: [], owner: [], maintainer: [], developer: [], ...c });
const issued = claims({ groups: ['acme', 'acme/web', 'beta'], groups_direct: ['acme', 'beta'], maintainer: ['acme'], developer: ['beta'] });

describe('claimsLost', () => {
  it('is false when nothing the token named went away or down', () => {
    expect(claimsLost(issued, issued)).toBe(false);
    // Promoted, and a group gained.
    expect(claimsLost(issued, claims({ ...issued, groups: [...issued.groups, 'gamma'], owner: ['acme'], maintainer: ['beta'], developer: [] }))).toBe(false);
  });

  it('is true for a group removed or expired, directly or through its parent', () => {
    expect(claimsLost(issued, claims({ ...issued, groups: ['acme', 'acme/web'], groups_direct: ['acme'], developer: [] }))).toBe(true);
    expect(claimsLost(issued, claims({ ...issued, groups: ['acme', 'beta'] }))).toBe(true);
  });

  it('is true for a direct membership gone while the group is still reached through a parent', () => {
    expect(claimsLost(issued, claims({ ...issued, groups_direct: ['acme'], developer: [] }))).toBe(true);
  });

  it('is true for a demotion below the level a claim named, whatever level is left', () => {
    expect(claimsLost(issued, claims({ ...issued, maintainer: [], developer: ['acme', 'beta'] }))).toBe(true);
    expect(claimsLost(issued, claims({ ...issued, developer: [] }))).toBe(true);
  });
});
