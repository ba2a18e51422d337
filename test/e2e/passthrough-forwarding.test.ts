// Pass-through routes: other endpoints of a backend, passed as bytes, against
// a real node:http backend: the body and the answer byte for byte, the
// upstream's headers instead of the client's credentials, hop-by-hop headers
// dropped both ways, uploads unread within a body limit. Tracing is off here:
// the client's trace context passes as sent (a traced request's: test/e2e/tracing.test.ts).
import { request } from 'node:http';
import { EMBEDDINGS_ANSWER, type RawBackend } from '../support/raw-backend';
import type { TestGateway } from '../support/gateway';
import { bearer, call, postChunked, rawRequest } from '../support/http';
import { expectError } from '../support/errors';
import { alice, EMBEDDINGS_BODY, JSON_TYPE, multipart, MULTIPART_TYPE, passthroughSuite } from '../support/passthrough-stack';

describe('pass-through routes', () => {
  let backend: RawBackend;
  let gw: TestGateway;
  const { reached } = passthroughSuite((s) => { ({ backend, gw } = s); });

  it('passes a JSON body and its answer byte for byte, onto the upstream\'s base path', async () => {
    const res = await call('POST', `${gw.url}/v2/embeddings?encoding=float`, EMBEDDINGS_BODY, { ...JSON_TYPE, ...bearer(alice.key), 'x-request-id': 'pt-1' });
    expect(res.status).toBe(200);
    expect(res.text).toBe(EMBEDDINGS_ANSWER);
    expect(res.headers['content-type']).toBe('application/json');
    // The gateway's own headers win over the backend's.
    expect(res.headers['x-request-id']).toBe('pt-1');
    const [seen] = reached();
    expect(seen.body.toString('utf8')).toBe(EMBEDDINGS_BODY);
    expect(seen.method).toBe('POST');
    expect(seen.url).toBe('/base/v1/embeddings?encoding=float');
    expect(seen.headers['content-length']).toBe(String(Buffer.byteLength(EMBEDDINGS_BODY)));
    expect(seen.headers['x-request-id']).toBe('pt-1');
  });

  it('sends the upstream\'s headers, never the client\'s credentials', async () => {
    const res = await call('POST', `${gw.url}/v1/embeddings`, EMBEDDINGS_BODY, {
      ...JSON_TYPE, ...bearer(alice.key), cookie: 'session=abc', 'proxy-authorization': 'Basic eA==', 'x-client': 'kept',
    });
    expect(res.status).toBe(200);
    const [{ headers }] = reached();
    expect(headers.authorization).toBe('Bearer upstream-secret');
    expect(headers['x-upstream']).toBe('yes');
    expect(headers.cookie).toBeUndefined();
    expect(headers['proxy-authorization']).toBeUndefined();
    expect(headers['x-client']).toBe('kept');
    expect(headers.host).toBe(new URL(backend.url).host);
  });

  it('with tracing off, passes the client\'s trace context on as sent, as a transparent proxy does', async () => {
    const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    const res = await call('POST', `${gw.url}/v1/embeddings`, EMBEDDINGS_BODY, { ...JSON_TYPE, ...bearer(alice.key), traceparent, tracestate: 'vendor=abc' });
    expect(res.status).toBe(200);
    const [{ headers }] = reached();
    expect(headers.traceparent).toBe(traceparent);
    expect(headers.tracestate).toBe('vendor=abc');
  });

  it('drops hop-by-hop headers both ways, every header a Connection header names included', async () => {
    const res = await new Promise<{ status?: number; headers: Record<string, unknown> }>((resolve, reject) => {
      const req = request(`${gw.url}/v1/audio/hop`, {
        method: 'POST',
        headers: { ...JSON_TYPE, ...bearer(alice.key), connection: 'keep-alive, X-Client-Hop, te', 'x-client-hop': 'only for the gateway', 'keep-alive': 'timeout=9', te: 'trailers', 'x-client': 'kept' },
        agent: false,
      }, (r) => { r.resume(); r.on('end', () => resolve({ status: r.statusCode, headers: r.headers })); });
      req.on('error', reject);
      req.end('{"model":"whisper-1"}');
    });
    expect(res.status).toBe(200);
    const [{ headers }] = reached();
    expect(headers['x-client-hop']).toBeUndefined();
    expect(headers.te).toBeUndefined();
    expect(headers['keep-alive']).toBeUndefined();
    expect(headers['x-client']).toBe('kept');
    // The backend's own hop-by-hop headers stay between it and the gateway.
    expect(res.headers['x-backend-hop']).toBeUndefined();
    expect(res.headers['keep-alive']).not.toBe('timeout=2');
    expect(String(res.headers.connection)).not.toMatch(/x-backend-hop/i);
    expect(res.headers['x-backend-kept']).toBe('yes');
  });

  it('closes the connection after the answer when the client asked to', async () => {
    const res = await rawRequest(gw.url, 'POST', '/v1/audio/hop', [['content-type', 'application/json'], ['authorization', `Bearer ${alice.key}`]], '{"model":"whisper-1"}');
    expect(res.status).toBe(200);
    expect(res.headers.connection).toBe('close');
  });

  it('passes a multipart upload unread, byte for byte, within the route\'s body limit', async () => {
    const body = multipart('RIFF....WAVEfmt forbidden phrase');
    const res = await call('POST', `${gw.url}/v1/audio/transcriptions`, body, { 'content-type': MULTIPART_TYPE, ...bearer(alice.key) });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ bytes: Buffer.byteLength(body), type: MULTIPART_TYPE });
    expect(reached()[0].body.toString('utf8')).toBe(body);
    // Over bodyLimit (2kb): declared, or counted as a chunked body flows.
    expectError(await call('POST', `${gw.url}/v1/audio/transcriptions`, multipart('x'.repeat(3000)), { 'content-type': MULTIPART_TYPE, ...bearer(alice.key) }), 413, 'payload_too_large');
    const streamed = await postChunked(`${gw.url}/v1/audio/transcriptions`, [multipart(''), 'y'.repeat(1500), 'y'.repeat(1500)], { 'content-type': MULTIPART_TYPE, ...bearer(alice.key) });
    expect(streamed).toMatchObject({ status: 413, body: { error: { reason: 'payload_too_large' } } });
  });

  it('reads a chunked JSON body too, and forwards it whole', async () => {
    const res = await postChunked(`${gw.url}/v1/embeddings`, [EMBEDDINGS_BODY.slice(0, 20), EMBEDDINGS_BODY.slice(20)], { ...JSON_TYPE, ...bearer(alice.key) });
    expect(res.status).toBe(200);
    expect(reached()[0].body.toString('utf8')).toBe(EMBEDDINGS_BODY);
  });

  it('refuses a body it cannot read for the policy (415) and invalid JSON (400)', async () => {
    expectError(await call('POST', `${gw.url}/v1/embeddings`, EMBEDDINGS_BODY, { 'content-type': 'text/plain', ...bearer(alice.key) }), 415, 'unsupported_media_type');
    expectError(await call('POST', `${gw.url}/v1/embeddings`, EMBEDDINGS_BODY, bearer(alice.key)), 415, 'unsupported_media_type');
    expectError(await call('POST', `${gw.url}/v1/embeddings`, '{"model": "emb-small",', { ...JSON_TYPE, ...bearer(alice.key) }), 400, 'invalid_json');
    expect(reached()).toHaveLength(0);
  });
});
