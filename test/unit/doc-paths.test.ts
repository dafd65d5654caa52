import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

// Docs are true: every repository path that docs/*.md, the README or a code comment names exists.
// A path is a top-level folder of this repository followed by a file name with an extension
// (`worker/durable/user/user.ts`), in a comment of worker/, test/ or bench/ also a path from inside
// worker/ (`services/inbox.ts`), and in Markdown the target of a link (`[…](deploy.md)`, read from
// the file's folder); globs and paths outside the repository (`../shared/…`) are not paths of this tree.

const root = join(import.meta.dirname, '..', '..');
const PATH = /(?<![\w./-])(?:worker|test|extension|shared|bench|docs)\/[A-Za-z0-9_.\-/]+\.(?:ts|tsx|mjs|js|md|json|toml|svg|png|py)\b/g;
/** In a comment of the Worker, its tests or the bench, a path from inside worker/ (`durable/directory/user-fanout.ts`). */
const WORKER_PATH = new RegExp(
  `(?<![\\w./-])(?:${readdirSync(join(root, 'worker'), { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name).join('|')})/[A-Za-z0-9_.\\-/]+\\.(?:ts|tsx|mjs|js)\\b`,
  'g',
);

const tracked = (): string[] =>
  execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard'], { cwd: root, encoding: 'utf8' })
    .split('\n')
    .filter(Boolean);

/** The comment text of a TypeScript or JavaScript file: `//` lines and `/* … *\/` blocks. */
const commentsOf = (source: string): string =>
  [...source.matchAll(/\/\*[\s\S]*?\*\/|(?<![:'"`\\])\/\/[^\n]*/g)].map((m) => m[0]).join('\n');

/**
 * The repository paths a Markdown file's links lead to (`[text](../worker/x.ts#anchor)`), read from
 * the file's folder as a Markdown viewer reads them; web addresses and a page's own anchors are not paths.
 */
const linkedPaths = (file: string, text: string): string[] =>
  [...text.matchAll(/\]\(<?([^)\s>]+)>?(?:\s+"[^"]*")?\)/g)]
    .map(([, target]) => target.replace(/[#?].*$/, ''))
    .filter((target) => target !== '' && !/^[a-z][a-z0-9+.-]*:/i.test(target))
    .map((target) => relative(root, resolve(root, dirname(file), decodeURI(target))));

const namedPaths = (): Map<string, string[]> => {
  const named = new Map<string, string[]>();
  const name = (path: string, file: string) => named.set(path, [...(named.get(path) ?? []), file]);
  for (const file of tracked()) {
    if (!existsSync(join(root, file))) continue;
    let text: string;
    if (/^(docs\/[^/]+|README)\.md$/.test(file) || file === 'README.md') {
      text = readFileSync(join(root, file), 'utf8');
      for (const path of linkedPaths(file, text)) name(path, file);
    } else if (/^(worker|test|extension|shared|bench)\/.*\.(ts|tsx|mts|mjs|js)$/.test(file)) {
      text = commentsOf(readFileSync(join(root, file), 'utf8'));
      if (!file.startsWith('extension/')) for (const [path] of text.matchAll(WORKER_PATH)) name(`worker/${path}`, file);
    } else continue;
    for (const [path] of text.matchAll(PATH)) {
      if (path.includes('*') || path.includes('/.output/')) continue; // globs; build output
      name(path, file);
    }
  }
  return named;
};

describe('paths named in docs and comments', () => {
  it('finds the paths it checks (the scan itself works)', () => {
    const named = namedPaths();
    expect(named.has('docs/architecture.md')).toBe(true);
    // A link from docs/ to the repository's root (docs/performance.md links bench/results.json).
    expect(named.get('bench/results.json')).toContain('docs/performance.md');
    // A path from inside worker/, in a comment of a test (test/unit/inbox-model.test.ts names services/inbox.ts).
    expect(named.get('worker/services/inbox.ts')).toContain('test/unit/inbox-model.test.ts');
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
