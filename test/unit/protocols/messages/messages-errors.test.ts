import { messagesErrorBody, messagesErrorStatus, messagesErrorType, streamErrorEvent } from '../../../../src/protocols/messages/errors';
import { catalogueReasons, statusOf } from '../../../../src/contract/errors';
import { PluginRegistry } from '../../../../src/pipeline/registry';
import { builtinPlugins } from '../../../../plugins';

describe('Messages errors', () => {
  // The catalogue as a gateway has it, the built-in plugins' reasons included.
  new PluginRegistry(builtinPlugins);
  // Every reason in the catalogue, with the status and type a Messages client sees.
  const table: Record<string, [number, string]> = {
    invalid_json: [400, 'invalid_request_error'],
    invalid_request: [400, 'invalid_request_error'],
    content_filter: [400, 'invalid_request_error'],
    pii_detected: [400, 'invalid_request_error'],
    unauthorized: [401, 'authentication_error'],
    model_not_allowed: [403, 'permission_error'],
    insufficient_scope: [403, 'permission_error'],
    read_only: [403, 'permission_error'],
    not_found: [404, 'not_found_error'],
    model_not_found: [404, 'not_found_error'],
    method_not_allowed: [405, 'invalid_request_error'],
    conflict: [409, 'invalid_request_error'],
    request_timeout: [408, 'invalid_request_error'],
    payload_too_large: [413, 'request_too_large'],
    unsupported_media_type: [415, 'invalid_request_error'],
    headers_too_large: [431, 'invalid_request_error'],
    rate_limited: [429, 'rate_limit_error'],
    internal_error: [500, 'api_error'],
    upstream_error: [502, 'api_error'],
    limiter_unavailable: [503, 'api_error'],
    store_unavailable: [503, 'api_error'],
    identity_unavailable: [503, 'api_error'],
    upstream_unavailable: [529, 'overloaded_error'],
    shutting_down: [503, 'api_error'],
    upstream_timeout: [504, 'timeout_error'],
    upstream_rejected: [400, 'invalid_request_error'],
    client_closed: [499, 'invalid_request_error'],
  };

  it('covers every reason of the catalogue', () => {
    expect(Object.keys(table).sort()).toEqual(catalogueReasons().map((r) => r.reason).sort());
  });

  it.each(Object.entries(table))('answers %s with its status and Anthropic\'s type', (reason, [status, type]) => {
    const sent = messagesErrorStatus(statusOf(reason), reason);
    expect([sent, messagesErrorType(sent)]).toEqual([status, type]);
    expect(JSON.parse(messagesErrorBody(statusOf(reason), reason, 'What to fix.'))).toEqual({
      type: 'error', error: { type, message: 'What to fix.', details: { error_code: reason } },
    });
  });

  it('keeps a backend\'s own 4xx status, typed by its class', () => {
    expect(messagesErrorStatus(422, 'upstream_rejected')).toBe(422);
    expect(messagesErrorType(422)).toBe('invalid_request_error');
  });

  it('carries the request id and the input at fault when given', () => {
    expect(JSON.parse(messagesErrorBody(400, 'invalid_request', 'max_tokens is required.', { requestId: 'req_1', param: 'max_tokens' }))).toEqual({
      type: 'error', error: { type: 'invalid_request_error', message: 'max_tokens is required.', details: { error_code: 'invalid_request', param: 'max_tokens' } }, request_id: 'req_1',
    });
  });

  it.each([
    ['an unavailable pool', { type: 'server_error', code: 'upstream_unavailable', message: 'm' }, 'overloaded_error'],
    ['a backend that timed out', { type: 'server_error', code: 'upstream_timeout', message: 'm' }, 'timeout_error'],
    ['a broken answer', { type: 'server_error', code: 'upstream_error', message: 'm' }, 'api_error'],
    ['a code outside the catalogue', { type: 'server_error', code: 'engine_crashed', message: 'm' }, 'api_error'],
    ['a native backend\'s own error type', { type: 'overloaded_error', code: 'upstream_error', message: 'm' }, 'overloaded_error'],
    ['a name from Object\'s prototype', { type: 'server_error', code: 'constructor', message: 'm' }, 'api_error'],
  ])('types the mid-stream error event of %s', (_what, failure, type) => {
    expect(streamErrorEvent(failure)).toEqual({ type: 'error', error: { type, message: 'm', details: { error_code: failure.code } } });
  });
});
