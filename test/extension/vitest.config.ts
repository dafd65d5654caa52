import preact from '@preact/preset-vite';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { defineConfig } from 'vitest/config';
import { prepare } from 'wxt';
import { WxtVitest } from 'wxt/testing/vitest-plugin';

const EXTENSION_ROOT = resolve(import.meta.dirname, '../../extension');

// extension/tsconfig.json extends the generated extension/.wxt/tsconfig.json, which a fresh clone
// does not have (it is git-ignored, made by `wxt prepare`). Make it here rather than in a
// `postinstall` script, so the tests run after `npm ci --ignore-scripts` or a deleted .wxt too.
if (!existsSync(resolve(EXTENSION_ROOT, '.wxt/tsconfig.json'))) await prepare({ root: EXTENSION_ROOT });

// The extension's unit and component tests, against WXT's fake browser (storage, alarms, badge,
// notifications) and happy-dom.
export default defineConfig({
  plugins: [WxtVitest({ root: EXTENSION_ROOT }), preact()],
  test: {
    name: 'extension',
    root: import.meta.dirname,
    include: ['**/*.test.{ts,tsx}'],
    environment: 'happy-dom',
    setupFiles: ['./setup.ts'],
    restoreMocks: true,
    // One happy-dom and one module graph for all files (measured: a third of the CPU time of a
    // fresh environment per file). setup.ts resets the fake browser before each test and unmounts what it rendered after.
    isolate: false,
    unstubGlobals: true,
  },
});
