// Spend you can read: every finished API request's usage and cost, summed
// per day for each key, each org and the whole gateway, and kept as a
// bounded log of usage records (docs/spend.md). The recorder writes; the
// admin API (GET /admin/spend, GET /admin/usage) reads.
export { SpendRecorder, DROPPED_TOTAL } from './recorder';
export { serveSpend, PrimarySpend, SPEND_CHANNEL } from './primary-spend';
export type { SpendSource } from './stores';
export type { SpendStore, DayTotals } from './store';
export { daysBetween } from './store';
export { MemorySpendStore } from './memory-store';
export { RedisSpendStore } from './redis-store';
export { usageRecordOf, nanosOf, zeroTotals, TOTAL_FIELDS, type UsageRecord, type SpendTotals } from './record';
