import { describe, expect, it } from 'vitest';
import { completeDevVars, DEV_VARS_HEADER, parseDevVars } from '../../worker/dev/dev-vars.mjs';

const fixed = (prefix: string) => `${prefix}generated`;

describe('completing .dev.vars for `npm start`', () => {
  it('adds TOKEN_HASH_KEY to a .dev.vars that has only ADMIN_TOKEN, keeping every line', () => {
    const old = '# my notes\nADMIN_TOKEN="knock_admin_mine"\nPUBLIC_URL=http://localhost:8787\n';
    const { text, added } = completeDevVars(old, fixed);
    expect(added).toEqual(['TOKEN_HASH_KEY']);
    expect(text).toBe(`${old}TOKEN_HASH_KEY="generated"\n`);
    expect(parseDevVars(text)).toEqual({ ADMIN_TOKEN: 'knock_admin_mine', PUBLIC_URL: 'http://localhost:8787', TOKEN_HASH_KEY: 'generated' });
  });

  it('adds ADMIN_TOKEN (with its recognisable prefix) when only the key is there, even without a final newline', () => {
    const { text, added } = completeDevVars('TOKEN_HASH_KEY=abc', fixed);
    expect(added).toEqual(['ADMIN_TOKEN']);
    expect(text).toBe('TOKEN_HASH_KEY=abc\nADMIN_TOKEN="knock_admin_generated"\n');
  });

  it('changes nothing when both secrets are there', () => {
    const complete = "export ADMIN_TOKEN='a' # root\nTOKEN_HASH_KEY = \"k\"\n";
    expect(completeDevVars(complete, fixed)).toEqual({ text: complete, added: [] });
  });

  it('replaces an empty assignment instead of leaving two', () => {
    const { text, added } = completeDevVars('ADMIN_TOKEN="a"\nTOKEN_HASH_KEY=""\nSIGNUP_ENABLED=false\n', fixed);
    expect(added).toEqual(['TOKEN_HASH_KEY']);
    expect(text).toBe('ADMIN_TOKEN="a"\nSIGNUP_ENABLED=false\nTOKEN_HASH_KEY="generated"\n');
  });

  it('writes both, under a header, for a new or empty file', () => {
    const { text, added } = completeDevVars('', fixed);
    expect(added).toEqual(['ADMIN_TOKEN', 'TOKEN_HASH_KEY']);
    expect(text).toBe(`${DEV_VARS_HEADER}ADMIN_TOKEN="knock_admin_generated"\nTOKEN_HASH_KEY="generated"\n`);
  });

  it('does not count a commented-out secret as present', () => {
    expect(completeDevVars('ADMIN_TOKEN=a\n# TOKEN_HASH_KEY=old\n', fixed).added).toEqual(['TOKEN_HASH_KEY']);
  });

  it('generates different random secrets by default', () => {
    const a = parseDevVars(completeDevVars('').text);
    const b = parseDevVars(completeDevVars('').text);
    expect(a.ADMIN_TOKEN).toMatch(/^knock_admin_[A-Za-z0-9_-]{32}$/);
    expect(a.TOKEN_HASH_KEY).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(a.TOKEN_HASH_KEY).not.toBe(b.TOKEN_HASH_KEY);
  });
});
