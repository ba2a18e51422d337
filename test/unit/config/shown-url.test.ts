// An endpoint's URL as metrics, spans and logs show it: credentials in the
// userinfo or the query replaced, the rest as configured.
import { shownUrl } from '../../../src/config/shown-url';

describe('shownUrl', () => {
  it.each([
    ['http://10.0.0.5:8000/v1', 'http://10.0.0.5:8000/v1'],
    ['https://api.example.com', 'https://api.example.com'],
    ['http://user:PASS@host:8000/v1?key=QKEY', 'http://***@host:8000/v1?key=***'],
    ['http://user@host/v1', 'http://***@host/v1'],
    ['https://host/openai?api-version=2024-10-21&key=QKEY&key=again', 'https://host/openai?api-version=***&key=***'],
    ['http://host/v1#token=FRAG', 'http://host/v1'],
    ['not a url', '***'],
  ])('%s is shown as %s', (url, shown) => {
    expect(shownUrl(url)).toBe(shown);
  });
});
