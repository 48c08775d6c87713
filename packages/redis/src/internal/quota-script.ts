/**
 * The Lua scripts of the quota store, one key each, so they are Cluster-safe.
 *
 * `QUOTA_SCRIPT`, one per spend: `@keyset/core`'s `applyQuotaSpend` (start or restart the
 * count for a newer generation, refill when a later period began, spend the cost if it
 * fits) on one hash, atomically.
 * KEYS[1]: the quota hash (`g` generation, `p` period, `r` remaining). ARGV: generation,
 * initial credits, period, refill amount (−1 for none), cost, then what to do when the
 * hash is missing (ARGV[6]): `0` answer `{ -1 }` and change nothing (the store asks the
 * durable store and calls again), `1` start from the initial credits (no durable state),
 * `2` start from the durable state ARGV[7..9] (generation, period, remaining). A hash that
 * exists ignores ARGV[6..9]: only a lost count is rebuilt. Returns
 * `{ allowed, remaining, generation, period }`, the state after the spend.
 *
 * `RAISE_SCRIPT`, after a flush found the durable state further along than Redis (a
 * failover to a replica that was behind): the hash becomes the later of itself and
 * ARGV[1..3] (generation, period, remaining), in the order of core's `isLaterQuotaState`.
 *
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
local missing = tonumber(ARGV[6] or '1')
local s = redis.call('HMGET', KEYS[1], 'g', 'p', 'r')
local g = tonumber(s[1])
local p = tonumber(s[2]) or 0
local r = tonumber(s[3])
if g == nil or r == nil then
  if missing == 0 then
    return { -1, 0, 0, 0 }
  elseif missing == 2 then
    g = tonumber(ARGV[7])
    p = tonumber(ARGV[8])
    r = tonumber(ARGV[9])
  end
end
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
return { allowed, r, g, p }
`;

export const RAISE_SCRIPT = `
local g = tonumber(ARGV[1])
local p = tonumber(ARGV[2])
local r = tonumber(ARGV[3])
local s = redis.call('HMGET', KEYS[1], 'g', 'p', 'r')
local sg = tonumber(s[1])
local sp = tonumber(s[2]) or 0
local sr = tonumber(s[3])
if sg ~= nil and sr ~= nil then
  if sg > g or (sg == g and (sp > p or (sp == p and sr <= r))) then
    return 0
  end
end
redis.call('HSET', KEYS[1], 'g', string.format('%.0f', g), 'p', string.format('%.0f', p), 'r', string.format('%.0f', r))
return 1
`;
