// The store packages: `npm run ext:zip` makes the Chromium and Firefox archives (and the sources
// Firefox's review asks for); the Firefox build passes Mozilla's linter (web-ext lint) without
// errors, and each manifest carries what its store requires.

import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { KNOCK_VERSION } from '../../shared/version';
import { ROOT } from './support/knock-server';

const OUTPUT = join(ROOT, 'extension', '.output');
const bin = (name: string) => join(ROOT, 'node_modules', '.bin', name);
const manifestOf = (build: string) => JSON.parse(readFileSync(join(OUTPUT, build, 'manifest.json'), 'utf8'));

describe('the store packages', () => {
  beforeAll(() => {
    execFileSync(bin('wxt'), ['zip', 'extension'], { cwd: ROOT, stdio: 'pipe' });
    execFileSync(bin('wxt'), ['zip', 'extension', '-b', 'firefox'], { cwd: ROOT, stdio: 'pipe' });
  });

  it('are both zipped, with the sources beside them', () => {
    for (const name of ['chrome', 'firefox', 'sources']) {
      const zip = join(OUTPUT, `knock-extension-${KNOCK_VERSION}-${name}.zip`);
      expect(existsSync(zip), zip).toBe(true);
      expect(statSync(zip).size).toBeGreaterThan(1000);
    }
  });

  it('Firefox’s passes web-ext lint without errors', () => {
    let report: string;
    try {
      report = execFileSync(bin('web-ext'), ['lint', '--source-dir', join(OUTPUT, 'firefox-mv3'), '--output', 'json'], {
        cwd: ROOT,
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
      });
    } catch (error) {
      // web-ext exits non-zero when there are errors; its JSON report is still on stdout.
      report = String((error as { stdout?: string }).stdout);
    }
    const { errors, warnings } = JSON.parse(report) as { errors: { message: string }[]; warnings: { code: string }[] };
    expect(errors).toEqual([]);
    console.log(`web-ext lint: 0 errors, ${warnings.length} warnings (${warnings.map((w) => w.code).join(', ')})`);
  });

  it('carry what each store requires: ids, the data-collection declaration, icons, host access to this machine', () => {
    const firefox = manifestOf('firefox-mv3');
    const chromium = manifestOf('chrome-mv3');
    expect(firefox.browser_specific_settings.gecko).toMatchObject({
      id: 'knock-extension@knock.dev',
      data_collection_permissions: { required: ['none'] },
    });
    expect(chromium.key).toEqual(expect.any(String));
    for (const manifest of [firefox, chromium]) {
      expect(Object.keys(manifest.icons)).toEqual(['16', '32', '48', '128']);
      expect(manifest.host_permissions).toEqual(['http://127.0.0.1/*', 'http://localhost/*', 'http://[::1]/*']);
      expect(manifest.version).toBe(KNOCK_VERSION);
    }
  });
});
