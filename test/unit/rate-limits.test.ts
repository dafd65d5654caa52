import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LIMITS } from '../../worker/edge/rate-limits';

const ROOT = join(import.meta.dirname, '../..');
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');

/** wrangler.toml's `[[ratelimits]]`: name, limit and period of each. */
const configured = () =>
  read('wrangler.toml')
    .split(/^\[\[ratelimits\]\]$/m)
    .slice(1)
    .map((block) => {
      const simple = /^simple = \{ limit = (\d+), period = (\d+) \}$/m.exec(block);
      return { name: /^name = "(\w+)"/m.exec(block)?.[1], limit: Number(simple?.[1]), period: Number(simple?.[2]) };
    });

describe('the rate limits, as configured and documented', () => {
  it("binds in wrangler.toml exactly the limits the Worker applies, each with a period Cloudflare accepts", () => {
    const limits = configured();
    expect(limits.map((l) => l.name).sort()).toEqual(Object.values(LIMITS).map((l) => l.binding).sort());
    for (const l of limits) {
      expect(l.limit, l.name).toBeGreaterThan(0);
      expect([10, 60], l.name).toContain(l.period);
    }
  });

  it('lists each in docs/security.md with the number wrangler.toml sets', () => {
    const doc = read('docs/security.md');
    for (const { name, limit, period } of configured()) expect(doc).toMatch(new RegExp(`^\\| \`${name}\` \\|.*\\| ${limit} per ${period} s`, 'm'));
  });
});
