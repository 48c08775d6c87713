/**
 * In-flight leases on Redis: one sorted set per holder, lease ids scored by their expiry
 * in ms of Redis `TIME`. Acquire prunes the expired leases and counts in the same script,
 * so two instances deciding at once can never both take the last slot.
 */

/**
 * KEYS[1] the holder's set; ARGV lease id, max, ttl ms.
 * Returns 1 when the lease was taken, 0 when `max` live leases are held.
 */
export const ACQUIRE_SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then
  return 0
end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[3]), ARGV[1])
local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
redis.call('PEXPIREAT', KEYS[1], tonumber(last[2]))
return 1
`;

/**
 * KEYS[1] the holder's set; ARGV lease id, ttl ms. Moves a live lease's expiry to ttl from
 * now (Redis `TIME`), and the set's with it when it is now the last. Returns 1, or 0 when
 * the lease is gone or already expired (an expired lease is never revived).
 */
export const RENEW_SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not score or tonumber(score) <= now then
  return 0
end
redis.call('ZADD', KEYS[1], 'XX', now + tonumber(ARGV[2]), ARGV[1])
local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
redis.call('PEXPIREAT', KEYS[1], tonumber(last[2]))
return 1
`;

/** KEYS[1] the holder's set; ARGV lease id. */
export const RELEASE_SCRIPT = `
return redis.call('ZREM', KEYS[1], ARGV[1])
`;
