import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

// The Worker's layers (docs/architecture.md, "Layers"): a file imports only from its own layer or
// the layers below it, no object imports Hono (middleware lives above the objects), and no file in
// worker/ is longer than 600 lines. Every file of worker/ has
// a layer here, so a new file or folder fails this test until someone has placed it.

const root = join(import.meta.dirname, '..', '..');

/** Top first. A file's layer is the first whose pattern matches its path. */
const LAYERS: [string, RegExp][] = [
  ['composition', /^worker\/(index|app)\.ts$|^worker\/dev\//],
  ['presenters', /^worker\/api\/presenters\//],
  ['routes and middleware', /^worker\/(api|oauth|pages|middleware)\/|^worker\/auth\/(api-auth|session)\.ts$|^worker\/secrets\.ts$/],
  ['services', /^worker\/services\//],
  ['objects', /^worker\/durable\//],
  ['rules and stores', /^worker\/(store|events|protocol|edge)\/|^worker\/auth\/secret-box\.ts$|^worker\/config\.ts$/],
  ['base', /^worker\/auth\/(crypto|policy|totp)\.ts$|^worker\/(clock|dates|errors|env)\.ts$/],
];
/** Presenters sit below the routes and pages that call them, and above the objects whose rows they show. */
const RANK: Record<string, number> = {
  composition: 6,
  'routes and middleware': 5,
  services: 4,
  presenters: 3.5,
  objects: 3,
  'rules and stores': 2,
  base: 1,
};

const layerOf = (file: string): string | null => LAYERS.find(([, pattern]) => pattern.test(file))?.[0] ?? null;

const workerFiles = (): string[] =>
  execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', 'worker'], { cwd: root, encoding: 'utf8' })
    .split('\n')
    .filter((f) => /\.(ts|tsx|mts|mjs)$/.test(f) && !f.endsWith('.d.ts') && !f.endsWith('.d.mts') && existsSync(join(root, f)));

/** The repository file a relative import names, as the bundler resolves it. */
const resolveImport = (from: string, spec: string): string | null => {
  if (!spec.startsWith('.')) return null;
  const base = normalize(join(dirname(from), spec));
  const found = [base, `${base}.ts`, `${base}.tsx`, join(base, 'index.ts'), join(base, 'index.tsx')].find((f) => /\.[a-z]+$/.test(f) && existsSync(join(root, f)));
  return found ?? base;
};

describe("the Worker's layers", () => {
  const files = workerFiles();

  it('place every file of worker/', () => {
    expect(files.length).toBeGreaterThan(100);
    expect(files.filter((f) => layerOf(f) === null)).toEqual([]);
  });

  it('import nothing from a layer above', () => {
    const upward: string[] = [];
    for (const file of files) {
      const from = layerOf(file);
      if (from === null) continue;
      // Every import, export … from, dynamic import() and `import type` alike.
      for (const { fileName } of ts.preProcessFile(readFileSync(join(root, file), 'utf8'), true, true).importedFiles) {
        const target = resolveImport(file, fileName);
        if (target === null || !target.startsWith('worker/')) continue;
        const to = layerOf(target);
        if (to !== null && RANK[to] > RANK[from]) upward.push(`${file} (${from}) imports ${target} (${to})`);
      }
    }
    expect(upward).toEqual([]);
  });

  it('keep HTTP out of the objects: no file of worker/durable/ imports Hono (middleware and routes are the layers above)', () => {
    const http = files
      .filter((file) => layerOf(file) === 'objects')
      .flatMap((file) =>
        ts
          .preProcessFile(readFileSync(join(root, file), 'utf8'), true, true)
          .importedFiles.filter(({ fileName }) => /^(hono|@hono\/)/.test(fileName))
          .map(({ fileName }) => `${file} imports ${fileName}`),
      );
    expect(http).toEqual([]);
  });

  it('keep every file at 600 lines or fewer', () => {
    const long = files
      .map((file) => ({ file, lines: readFileSync(join(root, file), 'utf8').replace(/\n$/, '').split('\n').length }))
      .filter(({ lines }) => lines > 600)
      .map(({ file, lines }) => `${file}: ${lines}`);
    expect(long).toEqual([]);
  });
});
