// A chat backend that answers whatever chunks the test sets: streamed, each
// chunk an event (then [DONE]), `paceMs` apart when set; as JSON, the
// chat.completion the chunks add up to. For the shapes of model output an
// attacker would script (a term around a tool call, an early finish reason,
// escapes, a long run of invisible characters).
//
//   const backend = await startChunkBackend();
//   backend.chunks = [chunk({ content: 'ok project ' }), chunk(toolDelta(0, '{}', { id: 'c', name: 'f' })), chunk({ content: 'bluebird' }, 'stop')];
import { assemble } from './chat-chunks';
import { startRecordingServer, type RecordingServer } from './json-server';

export interface ChunkBackend extends RecordingServer {
  chunks: object[];
  paceMs: number;
  /** Times (ms, performance.now()) each stream began and ended being written. */
  streams: Array<{ start: number; end: number }>;
}

export async function startChunkBackend(): Promise<ChunkBackend> {
  const state = { chunks: [] as object[], paceMs: 0, streams: [] as Array<{ start: number; end: number }> };
  const server = await startRecordingServer(async (_req, res, body) => {
    const chunks = state.chunks;
    if (body?.stream !== true) {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(assemble(chunks)));
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const start = performance.now();
    for (const c of chunks) {
      if (res.destroyed) return;
      res.write(`data: ${JSON.stringify(c)}\n\n`);
      if (state.paceMs > 0) await new Promise((r) => setTimeout(r, state.paceMs));
    }
    res.end('data: [DONE]\n\n');
    state.streams.push({ start, end: performance.now() });
  });
  return {
    ...server,
    get chunks() { return state.chunks; }, set chunks(c: object[]) { state.chunks = c; },
    get paceMs() { return state.paceMs; }, set paceMs(p: number) { state.paceMs = p; },
    streams: state.streams,
  };
}
