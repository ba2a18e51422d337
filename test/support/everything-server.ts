// The MCP reference server (@modelcontextprotocol/server-everything) as a
// child process, in Streamable HTTP mode (`streamableHttp`, port from PORT) on
// a free port, for the conformance suite's baseline and the gateway in front
// of it. Ready when it says it listens; killed, with its sessions, by close().
//   const everything = await startEverythingServer();   // everything.url: http://127.0.0.1:<port>/mcp
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { freePort } from './net';
import { ROOT } from './process';

const ENTRY = join(ROOT, 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js');

export interface EverythingServer {
  url: string;
  /** What it wrote to stdout and stderr, for a failure's message. */
  readonly output: string;
  close(): Promise<void>;
}

export async function startEverythingServer(timeoutMs = 15_000): Promise<EverythingServer> {
  const port = await freePort();
  const child = spawn(process.execPath, [ENTRY, 'streamableHttp'], { env: { ...process.env, PORT: String(port) }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error(`the reference server did not listen within ${timeoutMs} ms: ${output}`)); }, timeoutMs);
    const read = (chunk: Buffer): void => {
      output += chunk.toString('utf8');
      if (output.includes(`listening on port ${port}`)) { clearTimeout(timer); resolve(); }
    };
    child.stdout.on('data', read);
    child.stderr.on('data', read);
    void exited.then((code) => { clearTimeout(timer); reject(new Error(`the reference server exited with ${code}: ${output}`)); });
  });
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    get output() { return output; },
    close: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}
