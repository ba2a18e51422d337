// A real OTLP/HTTP trace receiver on loopback (node:http, port 0), as a
// collector is: it decodes each ExportTraceServiceRequest with the official
// OTLP protobuf schema (the code protobufjs generated from opentelemetry-proto,
// as @opentelemetry/otlp-transformer shipped it), or reads OTLP/JSON, and keeps
// every span flattened with its resource. On command it answers slowly,
// refuses (503), or is down (not listening), for the fault tests.
import { createServer, type IncomingMessage, type ServerResponse, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { until } from './wait';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const root = require('otlp-proto-root/build/src/generated/root') as {
  opentelemetry: { proto: { collector: { trace: { v1: { ExportTraceServiceRequest: ProtoType } } } } };
};
interface ProtoType { decode(buf: Uint8Array): unknown; toObject(m: unknown, o: object): unknown }
const REQUEST = root.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  /** '' for a root span. */
  parentSpanId: string;
  name: string;
  /** OTLP's SpanKind: 1 internal, 2 server, 3 client. */
  kind: number;
  attributes: Record<string, unknown>;
  events: Array<{ name: string; attributes: Record<string, unknown> }>;
  /** OTLP's status code: 0 unset, 1 ok, 2 error. */
  status: { code: number; message?: string };
  resource: Record<string, unknown>;
  /** Which encoding the batch came in. */
  encoding: 'protobuf' | 'json';
}

export type ReceiverMode = { kind: 'ok' } | { kind: 'slow'; ms: number } | { kind: 'refuse' };

export interface OtlpReceiver {
  /** http://127.0.0.1:<port>/v1/traces */
  url: string;
  port: number;
  spans: ReceivedSpan[];
  /** Export requests that arrived, however they were answered. */
  exports: number;
  /** How it answers from now on. */
  setMode(mode: ReceiverMode): void;
  /** Stops listening (a collector that is down), and listens again on the same port. */
  down(): Promise<void>;
  up(): Promise<void>;
  /** The spans of one trace, once `count` of them have arrived. */
  trace(traceId: string, count: number, timeoutMs?: number): Promise<ReceivedSpan[]>;
  /** Waits until a span matches. */
  waitFor(match: (s: ReceivedSpan) => boolean, what: string, timeoutMs?: number): Promise<ReceivedSpan>;
  close(): Promise<void>;
}

type AnyValue = { stringValue?: string; boolValue?: boolean; intValue?: string | number; doubleValue?: number; arrayValue?: { values?: AnyValue[] }; kvlistValue?: { values?: KeyValue[] } };
type KeyValue = { key: string; value?: AnyValue };

function valueOf(v: AnyValue | undefined): unknown {
  if (v === undefined) return undefined;
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.boolValue !== undefined) return v.boolValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.doubleValue !== undefined) return v.doubleValue;
  if (v.arrayValue !== undefined) return (v.arrayValue.values ?? []).map(valueOf);
  if (v.kvlistValue !== undefined) return attributesOf(v.kvlistValue.values);
  return undefined;
}

const attributesOf = (kvs: KeyValue[] | undefined): Record<string, unknown> => Object.fromEntries((kvs ?? []).map((kv) => [kv.key, valueOf(kv.value)]));

/** Ids arrive as bytes (protobuf, base64 after toObject) or hex (JSON). */
const hexId = (id: unknown, encoding: ReceivedSpan['encoding']): string =>
  typeof id !== 'string' || id === '' ? '' : encoding === 'json' ? id.toLowerCase() : Buffer.from(id, 'base64').toString('hex');

interface ExportRequest {
  resourceSpans?: Array<{ resource?: { attributes?: KeyValue[] }; scopeSpans?: Array<{ spans?: Array<Record<string, any>> }> }>;
}

function flatten(request: ExportRequest, encoding: ReceivedSpan['encoding']): ReceivedSpan[] {
  return (request.resourceSpans ?? []).flatMap((rs) => {
    const resource = attributesOf(rs.resource?.attributes);
    return (rs.scopeSpans ?? []).flatMap((ss) => (ss.spans ?? []).map((s): ReceivedSpan => ({
      traceId: hexId(s.traceId, encoding),
      spanId: hexId(s.spanId, encoding),
      parentSpanId: hexId(s.parentSpanId, encoding),
      name: s.name,
      kind: Number(s.kind ?? 0),
      attributes: attributesOf(s.attributes),
      events: (s.events ?? []).map((e: { name: string; attributes?: KeyValue[] }) => ({ name: e.name, attributes: attributesOf(e.attributes) })),
      status: { code: Number(s.status?.code ?? 0), message: s.status?.message },
      resource,
      encoding,
    })));
  });
}

function decode(req: IncomingMessage, body: Buffer): ReceivedSpan[] {
  if (String(req.headers['content-type']).startsWith('application/json')) return flatten(JSON.parse(body.toString('utf8')) as ExportRequest, 'json');
  const message = REQUEST.decode(body);
  return flatten(REQUEST.toObject(message, { longs: String, bytes: String, defaults: false, enums: Number }) as ExportRequest, 'protobuf');
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  let mode: ReceiverMode = { kind: 'ok' };
  const sockets = new Set<Socket>();
  const held = new Set<NodeJS.Timeout>();
  const receiver = { spans: [] as ReceivedSpan[], exports: 0 };

  const answer = (req: IncomingMessage, res: ServerResponse, body: Buffer): void => {
    receiver.exports++;
    if (mode.kind === 'refuse') {
      res.writeHead(503, { 'content-type': 'text/plain' });
      return void res.end('collector refuses');
    }
    const spans = decode(req, body);
    const ok = () => {
      receiver.spans.push(...spans);
      const json = String(req.headers['content-type']).startsWith('application/json');
      res.writeHead(200, { 'content-type': json ? 'application/json' : 'application/x-protobuf' });
      res.end(json ? '{}' : '');
    };
    if (mode.kind === 'slow') {
      const timer = setTimeout(() => { held.delete(timer); ok(); }, mode.ms);
      held.add(timer);
    } else ok();
  };

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      try {
        answer(req, res, Buffer.concat(chunks));
      } catch (err) {
        res.writeHead(400, { 'content-type': 'text/plain' });
        res.end(`cannot decode: ${(err as Error).message}`);
      }
    });
  });
  server.on('connection', (s) => { sockets.add(s); s.once('close', () => sockets.delete(s)); });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;

  const stop = async (): Promise<void> => {
    for (const t of held) clearTimeout(t);
    held.clear();
    for (const s of sockets) s.destroy();
    if (server.listening) await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  const waitFor = async (match: (s: ReceivedSpan) => boolean, what: string, timeoutMs = 10_000): Promise<ReceivedSpan> => {
    await until(() => receiver.spans.some(match), what, timeoutMs);
    return receiver.spans.find(match)!;
  };

  return Object.assign(receiver, {
    url: `http://127.0.0.1:${port}/v1/traces`,
    port,
    setMode: (m: ReceiverMode) => { mode = m; },
    down: stop,
    up: () => new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve)),
    trace: async (traceId: string, count: number, timeoutMs = 10_000) => {
      const of = () => receiver.spans.filter((s) => s.traceId === traceId);
      await until(() => of().length >= count, `${count} span(s) of trace ${traceId} (have ${of().map((s) => s.name).join(', ')})`, timeoutMs);
      return of();
    },
    waitFor,
    close: stop,
  });
}
