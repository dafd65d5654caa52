import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

// Docs are true: every repository path that docs/*.md, the README or a code comment names exists.
// A path is a top-level folder of this repository followed by a file name with an extension
// (`worker/durable/user/user.ts`); globs and paths outside the repository (`../shared/…`) are not
// paths of this tree.

const root = join(import.meta.dirname, '..', '..');
const PATH = /(?<![\w./-])(?:worker|test|extension|shared|bench|docs)\/[A-Za-z0-9_.\-/]+\.(?:ts|tsx|mjs|js|md|json|toml|svg|png|py)\b/g;

const tracked = (): string[] =>
  execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard'], { cwd: root, encoding: 'utf8' })
    .split('\n')
    .filter(Boolean);

/** The comment text of a TypeScript or JavaScript file: `//` lines and `/* … *\/` blocks. */
const commentsOf = (source: string): string =>
  [...source.matchAll(/\/\*[\s\S]*?\*\/|(?<![:'"`\\])\/\/[^\n]*/g)].map((m) => m[0]).join('\n');

const namedPaths = (): Map<string, string[]> => {
  const named = new Map<string, string[]>();
  for (const file of tracked()) {
    if (!existsSync(join(root, file))) continue;
    let text: string;
    if (/^(docs\/[^/]+|README)\.md$/.test(file) || file === 'README.md') text = readFileSync(join(root, file), 'utf8');
    else if (/^(worker|test|extension|shared|bench)\/.*\.(ts|tsx|mjs|js)$/.test(file) && !file.includes('/fixtures/')) {
      text = commentsOf(readFileSync(join(root, file), 'utf8'));
    } else continue;
    for (const [path] of text.matchAll(PATH)) {
      if (path.includes('*') || path.includes('/.output/')) continue; // globs; build output
      named.set(path, [...(named.get(path) ?? []), file]);
    }
  }
  return named;
};

describe('paths named in docs and comments', () => {
  it('finds the paths it checks (the scan itself works)', () => {
    expect(namedPaths().has('docs/architecture.md')).toBe(true);
  });

  it('all exist', () => {
    const missing = [...namedPaths()]
      .filter(([path]) => !existsSync(join(root, path)))
      .map(([path, where]) => `${path} (named in ${[...new Set(where)].join(', ')})`);
    expect(missing).toEqual([]);
  });
});

/** GitHub's anchor of a heading: lower case, punctuation dropped (an en dash too), spaces as hyphens. */
const anchorOf = (heading: string): string =>
  heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .trim()
    .replace(/\s/g, '-');

/** The anchors of a Markdown file's headings (code blocks left out: their `#` lines are comments). */
const anchorsIn = (file: string): Set<string> => {
  const text = readFileSync(join(root, file), 'utf8').replace(/^```[\s\S]*?^```/gm, '');
  return new Set([...text.matchAll(/^#{1,6}\s+(.*)$/gm)].map((m) => anchorOf(m[1])));
};

describe('links to a heading in docs/*.md and the README', () => {
  const docs = tracked().filter((f) => /^(docs\/[^/]+\.md|README\.md)$/.test(f) && existsSync(join(root, f)));

  it('each lead to a heading that exists, in the same file or the one named', () => {
    const broken: string[] = [];
    for (const file of docs) {
      const text = readFileSync(join(root, file), 'utf8');
      for (const [, target, anchor] of text.matchAll(/\]\(([\w./-]*\.md)?#([^)\s]+)\)/g)) {
        const into = target ? join(file.startsWith('docs/') ? 'docs' : '', target).replace(/^docs\/\.\.\//, '') : file;
        if (!existsSync(join(root, into)) || !anchorsIn(into).has(anchor)) broken.push(`${file}: ${target ?? ''}#${anchor}`);
      }
    }
    expect(docs.length).toBeGreaterThan(5);
    expect(broken).toEqual([]);
  });
});
