// One attempt at a backend as a client span, `chat <model>` in the GenAI
// conventions: where it went (server.address, server.port, the endpoint, the
// picker's decision), why it is a retry, the backend's status, its outcome,
// the first token when it brought it, and the traceparent the backend gets,
// so a backend started with tracing joins the same trace.
import { defaultTextMapSetter, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Attributes, type Context, type Span, type Tracer } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';

/** What the fleet knows of an attempt as it starts. */
/** gen_ai.operation.name of a request to `endpoint`: the GenAI conventions' name, else the endpoint's own (rerank, score, moderations). */
export function operationName(endpoint: string): string {
  return endpoint === 'images' ? 'generate_content' : endpoint === 'chat' ? 'chat' : endpoint;
}

export interface AttemptFacts {
  /** gen_ai.operation.name (operationName): chat, generate_content for images, embeddings, rerank, score, moderations. */
  operation: string;
  provider: string;
  /** The model as sent upstream. */
  model: string;
  upstream: string;
  /** The endpoint's URL, and its host and port. */
  endpoint: string;
  host: string;
  port: number;
  /** 1 for the request's first attempt, counted across its fallbacks. */
  attempt: number;
  picker: string;
  pickerReason?: string;
  /** Why the attempt before this one failed, when this one is a retry. */
  retryReason?: string;
}

const propagator = new W3CTraceContextPropagator();

/** Writes `traceparent` (and `tracestate`, when the span carries one) into `headers`: a backend's parent is `span`. */
export function injectParent(span: Span, headers: Record<string, unknown>): void {
  propagator.inject(trace.setSpan(ROOT_CONTEXT, span), headers, defaultTextMapSetter);
}

export class AttemptSpan {
  private readonly span: Span;

  constructor(tracer: Tracer, parent: Context, f: AttemptFacts) {
    const attributes: Attributes = {
      'gen_ai.operation.name': f.operation,
      'gen_ai.provider.name': f.provider,
      'gen_ai.request.model': f.model,
      'server.address': f.host,
      'server.port': f.port,
      'http.request.method': 'POST',
      'sluice.upstream': f.upstream,
      'sluice.endpoint': f.endpoint,
      'sluice.attempt': f.attempt,
      'sluice.picker': f.picker,
    };
    if (f.pickerReason !== undefined) attributes['sluice.picker.reason'] = f.pickerReason;
    if (f.retryReason !== undefined) attributes['sluice.retry.reason'] = f.retryReason;
    this.span = tracer.startSpan(`${f.operation} ${f.model}`, { kind: SpanKind.CLIENT, attributes }, parent);
  }

  /** The backend's traceparent (and tracestate): this attempt's span as its parent. */
  inject(headers: Record<string, string>): void {
    injectParent(this.span, headers);
  }

  status(code: number): void {
    this.span.setAttribute('http.response.status_code', code);
  }

  firstToken(): void {
    this.span.addEvent('sluice.first_token');
  }

  /**
   * How the attempt ended (the fleet's word: ok, failed, unreachable,
   * rate_limited, neutral) and, when it did not answer, error.type: the
   * socket error's code (or timeout), the backend's error status, or the
   * outcome itself (a bad answer). An attempt the gateway let go of (the
   * client left, the answer was whole) is no error.
   */
  end(result: string, status: number, code: string | undefined): void {
    const span = this.span;
    span.setAttribute('sluice.attempt.outcome', result);
    const type = code ?? (status >= 400 ? String(status) : result === 'ok' || result === 'neutral' ? undefined : result);
    if (type !== undefined) {
      span.setAttribute('error.type', type);
      span.setStatus({ code: SpanStatusCode.ERROR, message: type });
    }
    span.end();
  }
}
