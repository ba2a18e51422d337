// A URL from the config as the gateway shows it anywhere but in the request
// it sends: metric labels (on a listener that may need no token), span
// attributes, log lines. An endpoint may carry credentials in its userinfo
// (http://user:pass@host) or its query (?key=…): both are replaced with ***,
// the query's names kept. Made once per URL when the config loads.
//
//   shownUrl('http://user:PASS@host:8000/v1?key=QKEY')  // 'http://***@host:8000/v1?key=***'

const REDACTED = '***';

export function shownUrl(url: string): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return REDACTED; // the config check refuses it; nothing of it is shown meanwhile
  }
  if (u.username === '' && u.password === '' && u.search === '' && u.hash === '') return url;
  const auth = u.username !== '' || u.password !== '' ? `${REDACTED}@` : '';
  const names = [...new Set(u.searchParams.keys())];
  const query = names.length === 0 ? '' : `?${names.map((n) => `${encodeURIComponent(n)}=${REDACTED}`).join('&')}`;
  return `${u.protocol}//${auth}${u.host}${u.pathname}${query}`;
}
