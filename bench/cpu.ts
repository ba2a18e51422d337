// CPU time a process spent, from /proc (user + system), so the cost of a
// request is measured where it is paid, not guessed from wall-clock load.
import { readFileSync } from 'node:fs';

/** Clock ticks per second of /proc/<pid>/stat (USER_HZ, 100 on Linux). */
const TICKS_PER_SECOND = 100;

/** The process's user + system CPU time so far, in microseconds. */
export function cpuMicros(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name (which may hold spaces): state is the 3rd field, utime the 14th, stime the 15th.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1e6) / TICKS_PER_SECOND;
}

/** CPU microseconds per request the process spent while `run` sent `count` requests. */
export async function cpuPerRequest(pid: number, count: number, run: () => Promise<void>): Promise<number> {
  const before = cpuMicros(pid);
  await run();
  return Math.round((cpuMicros(pid) - before) / count);
}
