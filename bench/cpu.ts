// CPU time a process spent, from /proc (user + system), so the cost of a
// request is measured where it is paid, not guessed from wall-clock load.
import { execFileSync } from 'node:child_process';
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

/** The processes `pid` started (a primary's workers). */
export function childPids(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** `pid` and the processes it started: a gateway with workers is all of them. */
export const processTree = (pid: number): number[] => [pid, ...childPids(pid)];

/** CPU microseconds so far of `pid` and its children (the same children before and after a run). */
export const treeCpuMicros = (pids: number[]): number => pids.reduce((sum, p) => sum + cpuMicros(p), 0);

/** Resident memory of these processes together, in MB. */
export const rssMb = (pids: number[]): number =>
  pids.reduce((sum, p) => sum + Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${p}/status`, 'utf8'))![1]), 0) / 1024;

/** CPU microseconds per request the process (and its children) spent while `run` sent `count` requests. */
export async function cpuPerRequest(pid: number, count: number, run: () => Promise<void>): Promise<number> {
  const pids = processTree(pid);
  const before = treeCpuMicros(pids);
  await run();
  return Math.round((treeCpuMicros(pids) - before) / count);
}

/**
 * Sets the CPUs every thread of `pid` may run on ("1", "0-1") with taskset
 * (util-linux); false when it cannot (not Linux, no taskset, not allowed).
 */
export function pinTo(pid: number, cpus: string): boolean {
  try {
    execFileSync('taskset', ['-a', '-p', '-c', cpus, String(pid)], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}
