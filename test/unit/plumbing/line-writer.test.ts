// The log's writer (src/plumbing/line-writer.ts): a turn's lines in one write, whole
// lines only and never more than PIPE_BUF bytes a write.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { LineWriter, PIPE_BUF } from '../../../src/plumbing/line-writer';

function recorder() {
  const writes: string[] = [];
  let flushed = 0;
  let flushedSync = 0;
  return {
    writes,
    counts: () => ({ flushed, flushedSync }),
    dest: { write: (s: string) => { writes.push(s); }, flush: (cb?: () => void) => { flushed++; cb?.(); }, flushSync: () => { flushedSync++; } },
  };
}

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('LineWriter', () => {
  it('writes the lines of one turn together, at the end of the turn', async () => {
    const r = recorder();
    const w = new LineWriter(r.dest);
    w.write('{"a":1}\n');
    w.write('{"a":2}\n');
    expect(r.writes).toEqual([]);
    await turn();
    expect(r.writes).toEqual(['{"a":1}\n{"a":2}\n']);
    w.write('{"a":3}\n');
    await turn();
    expect(r.writes).toEqual(['{"a":1}\n{"a":2}\n', '{"a":3}\n']);
  });

  it('never puts more than PIPE_BUF bytes in one write, and splits only between lines', async () => {
    const r = recorder();
    const w = new LineWriter(r.dest);
    const line = (i: number) => `{"i":${i},"pad":"${'é'.repeat(200)}"}\n`; // 2-byte characters: bytes, not characters, count
    const lines = Array.from({ length: 60 }, (_, i) => line(i));
    for (const l of lines) w.write(l);
    await turn();
    expect(r.writes.length).toBeGreaterThan(1);
    for (const chunk of r.writes) {
      expect(Buffer.byteLength(chunk)).toBeLessThanOrEqual(PIPE_BUF);
      expect(chunk.endsWith('\n')).toBe(true);
    }
    expect(r.writes.join('')).toBe(lines.join(''));
  });

  it('writes what is pending when flushed, then flushes the destination', async () => {
    const r = recorder();
    const w = new LineWriter(r.dest);
    w.write('x\n');
    const done = jest.fn();
    w.flush(done);
    expect(r.writes).toEqual(['x\n']);
    expect(done).toHaveBeenCalled();
    w.write('y\n');
    w.flushSync();
    expect(r.writes).toEqual(['x\n', 'y\n']);
    expect(r.counts()).toEqual({ flushed: 1, flushedSync: 1 });
    await turn();
    expect(r.writes).toEqual(['x\n', 'y\n']); // nothing written twice
  });

  it('writes lines still pending when the process exits', () => {
    // The built logger in a process that logs and exits in the same turn.
    const log = join(__dirname, '..', '..', '..', 'dist', 'src', 'plumbing', 'log.js');
    const run = spawnSync(process.execPath, ['-e', `const l = require(${JSON.stringify(log)}).createLogger('info'); l.info('one'); l.warn('two'); process.exit(3);`], { encoding: 'utf8' });
    expect(run.status).toBe(3);
    expect(run.stdout.trim().split('\n').map((x) => JSON.parse(x).msg)).toEqual(['one', 'two']);
  });
});
