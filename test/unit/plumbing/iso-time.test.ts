import { isoTime } from '../../../src/plumbing/iso-time';

describe('isoTime', () => {
  it('writes what toISOString writes, across seconds, days, years and before 1970', () => {
    const times = [0, 1, 999, 1000, -1, -999, -1000, -1001, Date.UTC(2026, 10, 28, 23, 59, 59, 999), Date.UTC(2026, 10, 29), Date.UTC(2024, 1, 29, 12, 0, 0, 7), 253402300799999];
    let t = Date.UTC(2026, 10, 28, 23, 59, 58, 0);
    for (let i = 0; i < 3000; i++) times.push((t += 1 + (i % 7)));
    for (let i = 0; i < 2000; i++) times.push(Math.floor((Math.random() - 0.3) * 4e12));
    for (const now of times) expect(isoTime(now)).toBe(new Date(now).toISOString());
  });
});
