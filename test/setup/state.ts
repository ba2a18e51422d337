// Where global setup leaves what global teardown must stop: one file per run (the runner's pid).
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const STATE_FILE = join(tmpdir(), `sluice-suite-${process.pid}.json`);
