// Counts for windows longer than a Node timer can wait (a month's dollar
// budget in memory): kept for the whole window, gone after it, with
// RateLimiterMemory's answers; and the factories that pick them.
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import { LongWindowMemory, memoryLimiter, TIMER_MAX_SECONDS } from '../../../src/limiters/long-window';
import { decidedInProcess, insuranceFor, InsuranceLimiter } from '../../../src/limiters/insurance';
import { CALENDAR_SECONDS } from '../../../plugins/rate-limit/windows';

const DAY = 86_400_000;

describe('long-window memory counts', () => {
  beforeEach(() => jest.useFakeTimers({ now: Date.UTC(2026, 10, 1) }));
  afterEach(() => jest.useRealTimers());

  it('keeps a month-long count past the 24.8 days a timer can wait, and ends it with the window', async () => {
    const limiter = new LongWindowMemory(100, CALENDAR_SECONDS.month);
    expect((await limiter.consume('k', 60)).consumedPoints).toBe(60);
    jest.setSystemTime(Date.now() + 30 * DAY);
    jest.advanceTimersByTime(2 * 3_600_000); // the hourly sweep runs, and keeps it
    const over = await limiter.consume('k', 50).catch((r: unknown) => r);
    expect(over).toBeInstanceOf(RateLimiterRes);
    expect(over).toMatchObject({ consumedPoints: 110, remainingPoints: 0 });
    expect((await limiter.reward('k', 50)).consumedPoints).toBe(60);
    expect((await limiter.get('k'))!.msBeforeNext).toBe(2 * DAY - 2 * 3_600_000);
    jest.setSystemTime(Date.now() + 3 * DAY);
    expect(await limiter.get('k')).toBeNull();
    expect((await limiter.consume('k', 1))).toMatchObject({ consumedPoints: 1, isFirstInDuration: true });
  });

  it('charges and gives back like RateLimiterMemory: penalty never refuses', async () => {
    const limiter = new LongWindowMemory(10, CALENDAR_SECONDS.month);
    expect((await limiter.penalty('k', 25)).consumedPoints).toBe(25);
    await expect(limiter.consume('k', 1)).rejects.toBeInstanceOf(RateLimiterRes);
  });

  it('is what a window past a timer\'s reach gets, in memory and as Redis\'s insurance, whose answers are marked', async () => {
    expect(memoryLimiter(5, TIMER_MAX_SECONDS)).toBeInstanceOf(RateLimiterMemory);
    expect(memoryLimiter(5, TIMER_MAX_SECONDS + 1)).toBeInstanceOf(LongWindowMemory);
    expect(insuranceFor({ points: 5, duration: 60, keyPrefix: '' })).toBeInstanceOf(InsuranceLimiter);
    const long = insuranceFor({ points: 5, duration: CALENDAR_SECONDS.month, keyPrefix: '' });
    expect(long).toBeInstanceOf(LongWindowMemory);
    expect(decidedInProcess(await long.consume('k', 5))).toBe(true);
    expect(decidedInProcess(await long.consume('k', 1).catch((r: unknown) => r))).toBe(true);
    expect(decidedInProcess(await long.get('other'))).toBe(true);
  });
});
