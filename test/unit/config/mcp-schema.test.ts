// An entry of mcp.servers: a Streamable HTTP server (url) or a stdio server
// (command), exactly one, each problem named with its path.
import { ConfigError, validateConfig } from '../../../src/config/load';

function problemsOf(servers: Record<string, unknown>): string[] {
  try {
    validateConfig({ mcp: { servers } }, '(inline)', {});
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as ConfigError).problems;
  }
  return [];
}

describe('mcp.servers entries', () => {
  it('takes a stdio server with its defaults, numbers given as strings included', () => {
    const config = validateConfig({ mcp: { servers: { files: { command: 'node', args: ['server.js'], maxProcesses: '4' }, web: { url: 'http://127.0.0.1:1/mcp' } } } }, '(inline)', {});
    expect(config.mcp!.servers.files).toEqual({ kind: 'stdio', command: 'node', args: ['server.js'], env: {}, cwd: undefined, maxProcesses: 4, idleTimeoutMs: 300_000, timeoutMs: 60_000 });
    expect(config.mcp!.servers.web).toEqual({ kind: 'http', url: 'http://127.0.0.1:1/mcp', headers: {}, timeoutMs: 60_000 });
  });

  it.each([
    ['neither url nor command', {}, 'mcp.servers.x: needs "url"'],
    ['both url and command', { url: 'http://127.0.0.1:1/mcp', command: 'node' }, 'mcp.servers.x.command: give "url" or "command", not both'],
    ['headers on a stdio server', { command: 'node', headers: { a: 'b' } }, 'mcp.servers.x.headers: not a field of a server with "command"'],
    ['maxProcesses on an HTTP server', { url: 'http://127.0.0.1:1/mcp', maxProcesses: 2 }, 'mcp.servers.x.maxProcesses: not a field of a server with "url"'],
    ['maxProcesses of 0', { command: 'node', maxProcesses: 0 }, 'mcp.servers.x.maxProcesses: '],
    ['maxProcesses as words', { command: 'node', maxProcesses: 'many' }, 'mcp.servers.x.maxProcesses: '],
    ['an idle timeout under a second', { command: 'node', idleTimeoutMs: 10 }, 'mcp.servers.x.idleTimeoutMs: '],
    ['an empty command', { command: '' }, 'mcp.servers.x.command: '],
    ['a NUL in an argument', { command: 'node', args: ['a\0b'] }, 'mcp.servers.x.args[0]: must not hold a NUL'],
    ['an environment name that is not one', { command: 'node', env: { 'A-B': 'x' } }, 'mcp.servers.x.env'],
    ['args that are not a list', { command: 'node', args: 'server.js' }, 'mcp.servers.x.args: '],
    ['an unknown field', { command: 'node', shell: true }, 'mcp.servers.x.shell: unknown field'],
  ])('refuses %s, naming the path', (_what, entry, start) => {
    const problems = problemsOf({ x: entry });
    expect(problems).toHaveLength(1);
    expect(problems[0].startsWith(start)).toBe(true);
  });
});
