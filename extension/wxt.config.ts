import preact from '@preact/preset-vite';
import { resolve } from 'node:path';
import { defineConfig } from 'wxt';
import { KNOCK_VERSION as VERSION } from '../shared/version';

/**
 * Public half of the development signing key. It pins the Chromium extension id to
 * `odhclnlgfnipbpcdeojbgcidnleblgjk`, so the OAuth redirect URI
 * `https://odhclnlgfnipbpcdeojbgcidnleblgjk.chromiumapp.org/` (wrangler.toml,
 * EXTENSION_REDIRECT_URIS) is the same on every machine. The private half is not needed.
 */
const CHROMIUM_PUBLIC_KEY =
  'MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAtXCHARHYQTnW/sEAEKWYABc8GrBaeMd71PRyGWlPk40JwT73HfkJoX1zEq+YdCmYTIGRYAia1P/KFT38KTU0YYsL+yi8UOrg00Eor3NspkR12v3qy1dlXWm0l+uHaLVmQLkpAAlXbidGKm5toib45cdbehn1Luki5mfcr3bYw9p89jx+X7b9ekoL3tdZ8ri1C3i0dNK+KPVEB1xqHycgZJsSNZN2wGr5hzVSvmpDP6JEGsZgO5lyhQNnIUBTeaYN9dSpEG5eOM7bl1gLXdXLqD5ZTLq8qL0eiyKAfPMBBCgAVTwlTCJOKYQawTy590aXnd/PRZwqzQU31TEInoVPgwIDAQAB';

/** Firefox derives the redirect URI from this id (sha1 → `https://1315abde….extensions.allizom.org/`). */
const GECKO_ID = 'knock-extension@knock.dev';

const FIREFOX_SETTINGS = {
  gecko: {
    id: GECKO_ID,
    // The first versions that know `data_collection_permissions` (140 is an ESR).
    strict_min_version: '140.0',
    // Nothing is sent anywhere but to the Knock servers the user chose.
    data_collection_permissions: { required: ['none'] },
  },
  gecko_android: { strict_min_version: '142.0' },
};

export default defineConfig({
  imports: false,
  zip: {
    artifactTemplate: `knock-extension-${VERSION}-{{browser}}.zip`,
    sourcesTemplate: `knock-extension-${VERSION}-sources.zip`,
    // Firefox's review wants the sources that build the add-on: this folder and the shared client.
    sourcesRoot: resolve(import.meta.dirname, '..'),
    includeSources: ['extension/**', 'shared/**', 'package.json', 'package-lock.json'],
    excludeSources: ['extension/.output/**', 'extension/.wxt/**'],
  },
  manifestVersion: 3,
  vite: () => ({ plugins: [preact()] }),
  manifest: ({ browser }) => ({
    name: 'Knock',
    description: 'Approve and deny access requests from the toolbar.',
    version: VERSION,
    permissions: ['storage', 'alarms', 'notifications', 'identity'],
    // A server on this machine is allowed from the start, on any port: a match pattern without a
    // port matches every port (Chromium and Firefox; Firefox accepts no port in a pattern, so
    // `http://127.0.0.1:*/*` would grant nothing there). Any other server is asked for at run time,
    // from the options page, when it is added (lib/server-url.ts, `hostPattern`).
    host_permissions: ['http://127.0.0.1/*', 'http://localhost/*', 'http://[::1]/*'],
    optional_host_permissions: ['https://*/*', 'http://*/*'],
    ...(browser === 'firefox' ? { browser_specific_settings: FIREFOX_SETTINGS } : { key: CHROMIUM_PUBLIC_KEY }),
  }),
});
