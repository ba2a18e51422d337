// The parent of an MCP tool call's span: the call's params._meta traceparent
// first (where the MCP conventions carry one call's context), the request's
// header linked when it names another span; a malformed one is no parent.
import { trace } from '@opentelemetry/api';
import { toolCallParents } from '../../../src/tracing/tool-span';

describe('the tool call span\'s parent', () => {
  const META = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
  const HEADER = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
  const idsOf = (p: ReturnType<typeof toolCallParents>) => ({ parent: trace.getSpanContext(p.parent)?.spanId, link: p.link?.context.spanId });

  it('is the call\'s params._meta traceparent, the request\'s header linked; else the header; else none', () => {
    expect(idsOf(toolCallParents({ metaTraceparent: META, headers: { traceparent: HEADER } }))).toEqual({ parent: '00f067aa0ba902b7', link: 'b7ad6b7169203331' });
    expect(idsOf(toolCallParents({ metaTraceparent: META, headers: { traceparent: META } }))).toEqual({ parent: '00f067aa0ba902b7', link: undefined });
    expect(idsOf(toolCallParents({ headers: { traceparent: HEADER } }))).toEqual({ parent: 'b7ad6b7169203331', link: undefined });
    expect(idsOf(toolCallParents({ headers: {} }))).toEqual({ parent: undefined, link: undefined });
  });

  it('ignores a malformed traceparent wherever it came', () => {
    expect(idsOf(toolCallParents({ metaTraceparent: 'nope', headers: { traceparent: HEADER } }))).toEqual({ parent: 'b7ad6b7169203331', link: undefined });
    expect(idsOf(toolCallParents({ metaTraceparent: '00-aa-bb-01', headers: { traceparent: 'x' } }))).toEqual({ parent: undefined, link: undefined });
  });
});
