import { cloudflareTest } from '@cloudflare/vitest-plugin';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  plugins: [
    cloudflareTest({
      wrangler: { configPath: '../../wrangler.toml' },
      miniflare: {
        bindings: {
          ADMIN_TOKEN: 'test-admin-token',
          TOKEN_HASH_KEY: 'test-token-hash-key',
          PUBLIC_URL: 'http://knock.test',
        },
      },
    }),
  ],
  test: {
    name: 'worker',
    include: ['**/*.test.ts'],
    root: import.meta.dirname,
  },
});
