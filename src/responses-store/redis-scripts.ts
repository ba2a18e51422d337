// The Lua scripts of the Redis response store (redis-store.ts). Each owner's
// keys share one hash tag, so a script reads and writes them in one slot of
// a Redis Cluster, in one step:
//   KEYS[1] the record   <prefix>{resp:<owner's tag>}:<id>  (the owner's line, then the JSON; a remembered id: the line alone)
//   KEYS[2] the index    <prefix>{resp:<owner's tag>}:ids    (sorted set: id → when it expires, ms)
//   KEYS[3] the sizes    <prefix>{resp:<owner's tag>}:bytes  (hash: id → bytes counted; field "*" their sum)
// An evicted record's key is built from ARGV's base and the id: the same tag, so the same slot.
import { ENTRY_OVERHEAD } from './store';

/** Forgets `old` in the index and the sizes; what it counted. */
const FORGET = `
local function forget(old)
  local size = tonumber(redis.call('HGET', KEYS[3], old) or '0')
  if size > 0 then redis.call('HDEL', KEYS[3], old) redis.call('HINCRBY', KEYS[3], '*', -size) end
  redis.call('ZREM', KEYS[2], old)
end`;

/**
 * ARGV: id, value, ttl ms, now ms, the owner's most records, the owner's most bytes, the record keys' base.
 * Drops the owner's expired ids from the index, writes the record, then lets
 * the owner's oldest go (never the one just written) until the owner is
 * within both bounds. Returns how many went.
 */
export const PUT = `${FORGET}
local id, ttl, now, base = ARGV[1], tonumber(ARGV[3]), tonumber(ARGV[4]), ARGV[7]
local most, cap = tonumber(ARGV[5]), tonumber(ARGV[6])
for _, old in ipairs(redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now)) do
  redis.call('DEL', base .. old)
  forget(old)
end
forget(id)
local cost = #ARGV[2] + #id + ${ENTRY_OVERHEAD}
redis.call('SET', KEYS[1], ARGV[2], 'PX', ttl)
redis.call('ZADD', KEYS[2], now + ttl, id)
redis.call('HSET', KEYS[3], id, cost)
local total = redis.call('HINCRBY', KEYS[3], '*', cost)
local evicted = 0
while redis.call('ZCARD', KEYS[2]) > most or total > cap do
  local first = redis.call('ZRANGE', KEYS[2], 0, 1)
  local oldest = first[1]
  if oldest == id then oldest = first[2] end
  if not oldest then break end
  redis.call('DEL', base .. oldest)
  forget(oldest)
  total = tonumber(redis.call('HGET', KEYS[3], '*'))
  evicted = evicted + 1
end
redis.call('PEXPIRE', KEYS[2], ttl)
redis.call('PEXPIRE', KEYS[3], ttl)
return evicted`;

/**
 * ARGV: the owner's line, the id. Deletes the record when it is the owner's
 * and holds more than the line (a remembered id is not a response to delete).
 * Reads only the line and one byte more. Returns 1 when it deleted.
 */
export const DELETE_OWNED = `${FORGET}
local head = redis.call('GETRANGE', KEYS[1], 0, #ARGV[1])
if #head <= #ARGV[1] or string.sub(head, 1, #ARGV[1]) ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
forget(ARGV[2])
return 1`;
