// Stops the suite's own Redis (global-setup.ts) and removes its folder.
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { STATE_FILE } from './state';

export default function globalTeardown(): void {
  if (!existsSync(STATE_FILE)) return;
  const { pid, dir } = JSON.parse(readFileSync(STATE_FILE, 'utf8')) as { pid: number; dir: string };
  try { process.kill(pid, 'SIGKILL'); } catch { /* already gone */ }
  rmSync(dir, { recursive: true, force: true });
  rmSync(STATE_FILE, { force: true });
}
