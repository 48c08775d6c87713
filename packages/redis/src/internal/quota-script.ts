/**
 * The one Lua script a quota spend runs: `@keyset/core`'s `applyQuotaSpend` (start or
 * restart the count for a newer generation, refill when a later period began, spend the
 * cost if it fits) on one hash, atomically. One key per spend, so it is Cluster-safe.
 *
 * KEYS[1]: the quota hash (`g` generation, `p` period, `r` remaining). ARGV: generation,
 * initial credits, period, refill amount (−1 for none), cost. Returns `{ allowed, remaining }`.
 * Every number is an integer below 2^53, exact in Lua's doubles; `%.0f` writes them
 * without the exponent `tostring` would use.
 * @module
 */
export const QUOTA_SCRIPT = `
local gen = tonumber(ARGV[1])
local initial = tonumber(ARGV[2])
local period = tonumber(ARGV[3])
local refill = tonumber(ARGV[4])
local cost = tonumber(ARGV[5])
local s = redis.call('HMGET', KEYS[1], 'g', 'p', 'r')
local g = tonumber(s[1])
local p = tonumber(s[2]) or 0
local r = tonumber(s[3])
if g == nil or r == nil or g < gen then
  g = gen
  p = period
  r = initial
elseif g == gen and refill >= 0 and period > p then
  p = period
  r = refill
end
local allowed = 0
if cost <= r then
  r = r - cost
  allowed = 1
end
redis.call('HSET', KEYS[1], 'g', string.format('%.0f', g), 'p', string.format('%.0f', p), 'r', string.format('%.0f', r))
return { allowed, r }
`;
