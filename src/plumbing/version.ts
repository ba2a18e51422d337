// The gateway's version: the one in the package.json above this file (src/ or dist/src/ alike).
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

let version: string | undefined;

export function packageVersion(): string {
  if (version !== undefined) return version;
  version = 'unknown';
  for (let dir = __dirname; dir !== dirname(dir); dir = dirname(dir)) {
    const file = join(dir, 'package.json');
    if (existsSync(file)) {
      version = String(JSON.parse(readFileSync(file, 'utf8')).version);
      break;
    }
  }
  return version;
}
