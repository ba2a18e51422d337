import { dropHopByHop } from '../../../../src/api/passthrough/hop-headers';

describe('dropHopByHop', () => {
  it('removes the fixed hop-by-hop headers and keeps the end-to-end ones', () => {
    const headers = { connection: 'keep-alive', 'keep-alive': 'timeout=5', te: 'trailers', trailer: 'x', upgrade: 'h2c', 'proxy-connection': 'keep-alive', 'transfer-encoding': 'chunked', 'content-type': 'application/json', 'x-kept': '1' };
    dropHopByHop(headers);
    expect(headers).toEqual({ 'content-type': 'application/json', 'x-kept': '1' });
  });

  it('removes every header the Connection header names, in any case and spacing', () => {
    const headers = { connection: 'close, X-Secret ,x-other,,', 'x-secret': 'a', 'x-other': 'b', 'x-kept': 'c' };
    dropHopByHop(headers);
    expect(headers).toEqual({ 'x-kept': 'c' });
  });

  it('never removes the framing a Connection header names, and keeps what the caller still needs', () => {
    const headers = { connection: 'content-length, host, transfer-encoding', 'content-length': '5', host: 'h', 'transfer-encoding': 'chunked' };
    dropHopByHop(headers, ['transfer-encoding']);
    expect(headers).toEqual({ 'content-length': '5', host: 'h', 'transfer-encoding': 'chunked' });
  });
});
