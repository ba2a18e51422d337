import pino from 'pino';
import { isoTimeField } from '../../../src/plumbing/log';

describe('isoTimeField', () => {
  it('writes the field exactly as pino\'s isoTime does', () => {
    const now = Date.now();
    const spy = jest.spyOn(Date, 'now').mockReturnValue(now);
    try {
      expect(isoTimeField()).toBe(pino.stdTimeFunctions.isoTime());
    } finally {
      spy.mockRestore();
    }
  });

  it('changes with the millisecond, and repeats within one', () => {
    const a = isoTimeField(1_800_000_000_000);
    expect(a).toBe(',"time":"2027-01-15T08:00:00.000Z"');
    expect(isoTimeField(1_800_000_000_000)).toBe(a);
    expect(isoTimeField(1_800_000_000_001)).toBe(',"time":"2027-01-15T08:00:00.001Z"');
    expect(isoTimeField(1_800_000_000_000)).toBe(a);
  });
});
