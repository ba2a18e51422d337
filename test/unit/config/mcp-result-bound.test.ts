// mcp.maxResultBytes: a size as the other sizes are written, bounded, its
// problem named with its path; 16 MiB when left out.
import { validateConfig } from '../../../src/config/load';

const load = (mcp: Record<string, unknown>) => validateConfig({ mcp }, '(inline)', {});

describe('mcp.maxResultBytes', () => {
  it('takes a size or a byte count, and defaults to 16 MiB', () => {
    expect(load({ maxResultBytes: '4mb' }).mcp?.maxResultBytes).toBe(4 * 1024 * 1024);
    expect(load({ maxResultBytes: 1000 }).mcp?.maxResultBytes).toBe(1000);
    expect(load({}).mcp?.maxResultBytes).toBe(16 * 1024 * 1024);
  });

  it.each(['lots', -1, 0, '2gb'])('refuses %p with the field\'s path', (value) => {
    expect(() => load({ maxResultBytes: value })).toThrow(/mcp\.maxResultBytes/);
  });
});
