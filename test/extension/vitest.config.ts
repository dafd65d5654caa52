import preact from '@preact/preset-vite';
import { resolve } from 'node:path';
import { defineConfig } from 'vitest/config';
import { WxtVitest } from 'wxt/testing/vitest-plugin';

// The extension's unit and component tests, against WXT's fake browser (storage, alarms, badge,
// notifications) and happy-dom.
export default defineConfig({
  plugins: [WxtVitest({ root: resolve(import.meta.dirname, '../../extension') }), preact()],
  test: {
    name: 'extension',
    root: import.meta.dirname,
    include: ['**/*.test.{ts,tsx}'],
    environment: 'happy-dom',
    setupFiles: ['./setup.ts'],
    restoreMocks: true,
    unstubGlobals: true,
  },
});
