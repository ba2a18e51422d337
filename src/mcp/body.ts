// A POST's body: JSON (the transport sends each message as
// application/json), at most the gateway's bodyLimit, read whole (the
// policy reads it before anything is sent on) and parsed once.
import type { IncomingMessage } from 'node:http';
import { isJsonType } from '../api/json-body';
import { peekBody } from '../api/passthrough/peek-body';
import type { McpFailure } from './errors';
import { parseJson } from './list-filter';

export interface McpBody {
  bytes: Buffer;
  json: unknown;
}

const IDENTITY = /^\s*identity\s*$/i;

/** The body and its JSON; a failure to answer with; undefined when the client left while sending it. */
export async function readMcpBody(req: IncomingMessage, limit: number): Promise<McpBody | McpFailure | undefined> {
  if (!isJsonType(req.headers['content-type'])) return 'unsupported_media_type';
  const encoding = req.headers['content-encoding'];
  if (encoding !== undefined && !IDENTITY.test(encoding)) return 'unsupported_media_type';
  if (Number(req.headers['content-length'] ?? 0) > limit) return 'too_large';
  const read = await new Promise<Buffer | McpFailure | undefined>((resolve) => peekBody(req, limit, (err, bytes) => {
    if (err === undefined) return resolve(bytes);
    resolve(err.reason === 'payload_too_large' ? 'too_large' : undefined);
  }));
  if (!Buffer.isBuffer(read)) return read;
  const json = parseJson(read.toString('utf8'));
  return json === undefined ? 'parse' : { bytes: read, json };
}
