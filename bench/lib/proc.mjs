// CPU time of the workerd processes this process started, from /proc (bench/cpu.mjs, bench/loop.mjs).
import { readdirSync, readFileSync } from 'node:fs';

const TICKS_PER_SECOND = 100;
/** The fields of a /proc stat file after the command's name (proc(5): the state is the first). */
const statFields = (path) => {
  const stat = readFileSync(path, 'utf8');
  return { name: stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')), fields: stat.slice(stat.lastIndexOf(')') + 2).split(' ') };
};
/** User + system CPU seconds of a process or thread (proc(5): utime and stime, fields 14 and 15). */
const cpuOf = (path) => {
  const { fields } = statFields(path);
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
};
/** The workerd processes this process started (Miniflare spawns them as its children). */
export const workerdChildren = () =>
  new Set(
    readdirSync('/proc')
      .filter((p) => /^[0-9]+$/.test(p))
      .filter((p) => {
        try {
          const { name, fields } = statFields(`/proc/${p}/stat`);
          return name === 'workerd' && Number(fields[1]) === process.pid;
        } catch {
          return false;
        }
      }),
  );
/** CPU seconds of a process, all its threads. */
export const cpuSeconds = (pid) => cpuOf(`/proc/${pid}/stat`);
/** CPU seconds of each thread of a process, by thread id. */
export const threadSeconds = (pid) =>
  new Map(
    readdirSync(`/proc/${pid}/task`).map((tid) => {
      try {
        return [tid, cpuOf(`/proc/${pid}/task/${tid}/stat`)];
      } catch {
        return [tid, 0];
      }
    }),
  );
