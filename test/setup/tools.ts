// The programs the suite runs besides Node: redis-server and redis-cli (the
// suite's own Redis, and the tests that stop and restart servers) and
// promtool (the metrics and dashboard checks). Missing ones are installed
// when that can be done here (root, with apt-get); otherwise the run stops at
// once with the one command that installs them.
import { spawnSync } from 'node:child_process';

interface Tool { command: string; pkg: string }

export const TOOLS: readonly Tool[] = [
  { command: 'redis-server', pkg: 'redis-server' },
  { command: 'redis-cli', pkg: 'redis-tools' },
  { command: 'promtool', pkg: 'prometheus' },
];

const onPath = (command: string): boolean => spawnSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' }).status === 0;

export const installCommand = (pkgs: readonly string[]): string => `apt-get install -y ${pkgs.join(' ')}`;

/** The packages of the tools not on the PATH. */
export const missingPackages = (tools: readonly Tool[] = TOOLS): string[] => [...new Set(tools.filter((t) => !onPath(t.command)).map((t) => t.pkg))];

/** Installs what is missing when it can; throws with the command to run when it cannot. */
export function ensureTools(
  tools: readonly Tool[] = TOOLS,
  canInstall = process.getuid?.() === 0 && onPath('apt-get'),
  log: (line: string) => void = (line) => process.stderr.write(`${line}\n`),
): void {
  const missing = missingPackages(tools);
  if (missing.length === 0) return;
  if (canInstall) {
    log(`test setup: installing ${missing.join(', ')} (apt-get)`);
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
    spawnSync('apt-get', ['update', '-qq'], { stdio: 'ignore', env, timeout: 300_000 });
    spawnSync('apt-get', ['install', '-y', '-qq', ...missing], { stdio: 'ignore', env, timeout: 600_000 });
  }
  const still = missingPackages(tools);
  if (still.length > 0) {
    throw new Error(`The test suite needs ${still.join(', ')}. Install with: ${canInstall ? '' : 'sudo '}${installCommand(still)}`);
  }
}
