// `npm test`: the type check and the test projects, at the same time. On two cores Vitest runs one
// file at a time by default (its maxWorkers is the cores less one), so its projects go one after
// another, and each mostly waits: the worker project on workerd (one core), the system and scripts
// projects on their servers and browsers. So this runs the type check, the worker project, the
// scripts project and the other three projects as four processes side by side, each line prefixed
// with its part, and fails when any of them fails. Arguments go to every Vitest run
// (`npm test -- users.test.ts` runs the files whose path has it).
// Each Vitest run writes its JSON report under .tmp/, and the three are merged into
// .tmp/vitest-results.json (docs/testing.md).
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(import.meta.dirname, '..');
const TMP = join(ROOT, '.tmp');
const args = process.argv.slice(2);
const bin = (name) => join(ROOT, 'node_modules', '.bin', name);

const started = Date.now();

/**
 * Runs `command`, prefixing each line of its output with `label`; resolves to its exit code. Each
 * part says when it ended, counted from the start of `npm test`, so the longest is plain to see.
 */
const run = (label, command, commandArgs) =>
  new Promise((resolve) => {
    const child = spawn(command, commandArgs, { cwd: ROOT, env: { ...process.env, FORCE_COLOR: process.env.FORCE_COLOR ?? '0' } });
    for (const [from, to] of [
      [child.stdout, process.stdout],
      [child.stderr, process.stderr],
    ]) {
      let rest = '';
      from.on('data', (chunk) => {
        const lines = (rest + chunk).split('\n');
        rest = lines.pop();
        for (const line of lines) to.write(`[${label}] ${line}\n`);
      });
      from.on('end', () => rest && to.write(`[${label}] ${rest}\n`));
    }
    child.on('close', (code, signal) => {
      process.stdout.write(`[${label}] ended after ${Math.round((Date.now() - started) / 1000)} s\n`);
      resolve(code ?? (signal ? 1 : 0));
    });
  });

const vitest = (label, projects, options = []) => {
  const report = join(TMP, `vitest-${label}.json`);
  const projectArgs = projects.flatMap((p) => ['--project', p]);
  return {
    report,
    done: run(label, bin('vitest'), ['run', ...projectArgs, ...options, '--passWithNoTests', '--reporter=default', '--reporter=json', `--outputFile=${report}`, ...args]),
  };
};

mkdirSync(TMP, { recursive: true });
// The worker project with two Vitest workers, each a workerd runtime of its own that its files
// share (test/worker/vitest.config.ts), files handed to whichever is free: 240 s for the whole
// run on a fresh clone against 298 s with one (docs/testing.md). Two static shards had been
// slower (339 s), when the system side was heavier.
const worker = vitest('worker', ['worker'], ['--maxWorkers=2']);
// The scripts project (npm start, its restarts, the crash test, the tour: servers of their own) in
// a process of its own: Vitest runs the files of every project that runs one file at a time in one
// queue, one after another, so in the same run as the system project its files would wait for
// each other's. Here each of the two goes one file at a time, beside the other.
const scripts = vitest('scripts', ['scripts']);
// The extension's generated tsconfig, which the type check and the extension project read (the
// worker project does not, so it starts first: it is the longest part).
if ((await run('prepare', bin('wxt'), ['prepare', 'extension'])) !== 0) {
  await Promise.all([worker.done, scripts.done]);
  process.exit(1);
}
// At a lower priority (nice 10): on two cores the tests are the longest parts, and the type check
// (about 35 s of CPU, done well before them) gives them the CPU when both want it.
const typecheck = run('typecheck', 'nice', ['-n', '10', 'npm', 'run', '--silent', 'typecheck:tsc']);
// Two files at a time (Vitest's default on two cores is one): the unit and extension projects'
// files run beside the system project's, which mostly waits on its servers and browsers; the system
// project itself still runs one file at a time (`fileParallelism: false`).
const others = vitest('others', ['system', 'unit', 'extension'], ['--maxWorkers=2']);
const codes = await Promise.all([typecheck, worker.done, others.done, scripts.done]);

// One report of the three runs, as one Vitest run would have written it.
const reports = [worker.report, others.report, scripts.report].map((file) => {
  try {
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    return null;
  }
});
const sum = (key) => reports.reduce((n, r) => n + (r?.[key] ?? 0), 0);
const merged = {
  numTotalTests: sum('numTotalTests'),
  numPassedTests: sum('numPassedTests'),
  numFailedTests: sum('numFailedTests'),
  numPendingTests: sum('numPendingTests'),
  numTotalTestSuites: sum('numTotalTestSuites'),
  numFailedTestSuites: sum('numFailedTestSuites'),
  startTime: Math.min(...reports.map((r) => r?.startTime ?? Infinity)),
  success: reports.every((r) => r?.success) && codes.every((c) => c === 0),
  testResults: reports.flatMap((r) => r?.testResults ?? []),
};
writeFileSync(join(TMP, 'vitest-results.json'), JSON.stringify(merged));

const parts = ['type check', 'worker project', 'system, unit and extension projects', 'scripts project'];
const failed = parts.filter((_, i) => codes[i] !== 0);
const seconds = Math.round(performance.now() / 1000);
console.log(`\n${merged.numPassedTests} passed, ${merged.numFailedTests} failed${failed.length ? `; failed: ${failed.join(', ')}` : ''} (${seconds} s)`);
process.exit(failed.length ? 1 : 0);
