// multipart/form-data (RFC 7578), the few parts an audio upload has: read
// from a body already bounded in size, and written again for the backend
// when a field changed (a renamed model, a redacted prompt). A file's bytes
// are a view of the client's body, never copied.
//
//   const parts = parseMultipart(body, boundaryOf(req.headers['content-type'])!);
//   const again = encodeMultipart(parts, boundary);
import { GatewayError } from '../contract/errors';

export interface Part {
  name: string;
  /** Set on a file part. */
  filename?: string;
  contentType?: string;
  data: Buffer;
}

/** An upload has a file and a handful of fields: more parts than this is not an upload. */
export const MAX_PARTS = 64;
const MAX_HEADERS_BYTES = 8 * 1024;

const BOUNDARY = /;\s*boundary=(?:"([^"]{1,70})"|([^;\s"]{1,70}))(?=;|\s|$)/i;
const MULTIPART = /^multipart\/form-data\s*;/i;

/** The boundary of a multipart/form-data content type; undefined for any other type. */
export function boundaryOf(type: string | undefined): string | undefined {
  if (type === undefined || !MULTIPART.test(type)) return undefined;
  const m = BOUNDARY.exec(type);
  return m === null ? undefined : (m[1] ?? m[2]);
}

const malformed = (why: string): GatewayError =>
  new GatewayError('invalid_request', `The multipart/form-data body is malformed: ${why}. Send the upload as a client library writes it.`);

/** A parameter of Content-Disposition (name, filename), unquoted; undefined when absent. */
function dispositionParam(header: string, key: string): string | undefined {
  const m = new RegExp(`;\\s*${key}="((?:[^"\\\\]|\\\\.)*)"|;\\s*${key}=([^;\\s]+)`, 'i').exec(header);
  if (m === null) return undefined;
  return m[1] !== undefined ? m[1].replace(/\\(.)/g, '$1') : m[2];
}

function partHeaders(text: string): { name: string; filename?: string; contentType?: string } {
  let disposition: string | undefined;
  let contentType: string | undefined;
  for (const line of text.split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon < 0) throw malformed('a part header has no colon');
    const field = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    if (field === 'content-disposition') disposition = value;
    else if (field === 'content-type') contentType = value;
  }
  if (disposition === undefined || !/^form-data\s*(;|$)/i.test(disposition)) throw malformed('a part has no Content-Disposition: form-data');
  const name = dispositionParam(disposition, 'name');
  if (name === undefined || name === '') throw malformed('a part has no name');
  const filename = dispositionParam(disposition, 'filename');
  return { name, ...(filename !== undefined ? { filename } : {}), ...(contentType !== undefined ? { contentType } : {}) };
}

/** The parts of a whole multipart body. Throws a 400 on anything that is not one. */
export function parseMultipart(body: Buffer, boundary: string): Part[] {
  const delimiter = Buffer.from(`--${boundary}`, 'latin1');
  const between = Buffer.from(`\r\n--${boundary}`, 'latin1');
  let at = body.indexOf(delimiter);
  if (at < 0) throw malformed('the boundary never appears');
  const parts: Part[] = [];
  for (;;) {
    at += delimiter.length;
    if (body[at] === 0x2d && body[at + 1] === 0x2d) return parts; // the closing delimiter
    if (body[at] !== 0x0d || body[at + 1] !== 0x0a) throw malformed('a boundary is not followed by a line end');
    if (parts.length === MAX_PARTS) throw malformed(`more than ${MAX_PARTS} parts`);
    const headersEnd = body.indexOf('\r\n\r\n', at + 2, 'latin1');
    if (headersEnd < 0 || headersEnd - at > MAX_HEADERS_BYTES) throw malformed('a part\'s headers do not end');
    const head = partHeaders(body.toString('utf8', at + 2, headersEnd));
    const end = body.indexOf(between, headersEnd + 4);
    if (end < 0) throw malformed('the closing boundary is missing');
    parts.push({ ...head, data: body.subarray(headersEnd + 4, end) });
    at = end + 2;
  }
}

const quote = (s: string): string => s.replace(/["\\\r\n]/g, (c) => (c === '"' || c === '\\' ? `\\${c}` : ' '));

/** The parts as a multipart/form-data body under `boundary` (the file's bytes as they came). */
export function encodeMultipart(parts: readonly Part[], boundary: string): Buffer {
  const out: Buffer[] = [];
  for (const p of parts) {
    let head = `--${boundary}\r\nContent-Disposition: form-data; name="${quote(p.name)}"`;
    if (p.filename !== undefined) head += `; filename="${quote(p.filename)}"`;
    if (p.contentType !== undefined) head += `\r\nContent-Type: ${p.contentType.replace(/[\r\n]/g, '')}`;
    out.push(Buffer.from(`${head}\r\n\r\n`, 'utf8'), p.data, Buffer.from('\r\n', 'latin1'));
  }
  out.push(Buffer.from(`--${boundary}--\r\n`, 'latin1'));
  return Buffer.concat(out);
}
