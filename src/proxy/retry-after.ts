// A backend's Retry-After, read once for both its uses: passed on to the
// client (only a delay in seconds or an HTTP date, nothing else), and the
// delay in milliseconds that keeps a rate-limited endpoint out of rotation.

/** The header as it may be passed on, or undefined when it is neither a delay nor a date. */
export function retryAfterValue(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  if (/^\d{1,7}$/.test(value)) return value;
  return value.length <= 64 && /^[A-Za-z0-9 ,:-]+$/.test(value) && !Number.isNaN(Date.parse(value)) ? value : undefined;
}

/** The delay it asks for, in milliseconds; undefined when absent or unreadable. */
export function retryAfterMs(value: unknown): number | undefined {
  const valid = retryAfterValue(value);
  if (valid === undefined) return undefined;
  return /^\d+$/.test(valid) ? Number(valid) * 1000 : Math.max(0, Date.parse(valid) - Date.now());
}
