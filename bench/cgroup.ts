// A CPU share for the gateway under test, so the load generator and the
// backend keep theirs: a cgroup with a CPU quota (v2 `cpu.max` or v1
// `cpu.cfs_quota_us`) that the gateway's process, and the workers it forks,
// run in. Needs root and a cpu controller; without them there is no quota and
// the run says so.
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** A short period, so a share is spread evenly over time rather than used up in bursts. */
const PERIOD_US = 10_000;

export interface CpuQuota {
  /** The command and arguments that start `cmd args` inside the group. */
  wrap(cmd: string, args: string[]): [string, string[]];
  remove(): void;
}

function makeGroup(name: string, cores: number): string | undefined {
  const quota = String(Math.round(cores * PERIOD_US));
  const v2 = '/sys/fs/cgroup';
  if (existsSync(join(v2, 'cgroup.controllers')) && readFileSync(join(v2, 'cgroup.controllers'), 'utf8').split(/\s+/).includes('cpu')) {
    const subtree = join(v2, 'cgroup.subtree_control');
    if (!readFileSync(subtree, 'utf8').split(/\s+/).includes('cpu')) writeFileSync(subtree, '+cpu');
    const dir = join(v2, name);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'cpu.max'), `${quota} ${PERIOD_US}`);
    return dir;
  }
  const v1 = '/sys/fs/cgroup/cpu';
  if (existsSync(join(v1, 'cpu.cfs_quota_us'))) {
    const dir = join(v1, name);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'cpu.cfs_period_us'), String(PERIOD_US));
    writeFileSync(join(dir, 'cpu.cfs_quota_us'), quota);
    return dir;
  }
  return undefined;
}

/** A group allowed `cores` cores; undefined when this machine or user cannot make one. */
export function cpuQuota(name: string, cores: number): CpuQuota | undefined {
  let dir: string | undefined;
  try {
    dir = makeGroup(name, cores);
  } catch {
    return undefined;
  }
  if (dir === undefined) return undefined;
  const procs = join(dir, 'cgroup.procs');
  return {
    wrap: (cmd, args) => ['/bin/sh', ['-c', `echo $$ > '${procs}' && exec "$0" "$@"`, cmd, ...args]],
    remove: () => {
      try { rmdirSync(dir); } catch { /* still has processes: removed with them at the next run */ }
    },
  };
}
