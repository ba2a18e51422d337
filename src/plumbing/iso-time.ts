// A time as ISO 8601 UTC text (2026-11-28T23:45:12.345Z), for the access
// log and the usage records. Date's own toISOString formats every call
// through printf; here the text up to the second is made once a second and
// the milliseconds come from a table, so a busy process pays a string join.

const MILLIS = Array.from({ length: 1000 }, (_, i) => String(i).padStart(3, '0'));

let secondAt = Number.NaN;
/** "2026-11-28T23:45:12." for the second starting at secondAt. */
let secondText = '';

/** `now` (ms since the epoch, as Date.now() gives it) as Date's toISOString() would write it. */
export function isoTime(now: number): string {
  const ms = ((now % 1000) + 1000) % 1000;
  const second = now - ms;
  if (second !== secondAt) {
    secondAt = second;
    const whole = new Date(second).toISOString(); // ends ".000Z"
    secondText = whole.slice(0, whole.length - 4);
  }
  return `${secondText}${MILLIS[ms]}Z`;
}
