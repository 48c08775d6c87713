/**
 * The Lua scripts of the quota store. Their keys share one hash tag (a key's count sits in
 * its owner's, `{owner:<id>}`), so they are Cluster-safe.
 *
 * `QUOTA_SCRIPT`, one per spend of one quota or of several decided together (a key's and
 * its owner's): `@keyset/core`'s `applyQuotaSpends` (start or restart each count for a
 * newer generation, refill when a later period began, then spend every cost if each count
 * covers its own, else none) on the hashes, atomically.
 * KEYS[i]: a quota hash (`g` generation, `p` period, `r` remaining). ARGV, 9 per key:
 * generation, initial credits, period, refill amount (−1 for none), cost, then what to do
 * when the hash is missing: `0` answer `{ -1, i… }` (the missing keys' positions) and
 * change nothing (the store asks the durable store and calls again), `1` start from the
 * initial credits (no durable state), `2` start from the durable state in the last three
 * (generation, period, remaining). A hash that exists ignores those four: only a lost
 * count is rebuilt. Returns `{ all, allowed₁, remaining₁, generation₁, period₁, … }`: whether
 * the costs were spent, then per key whether it covered its cost and its state after.
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
local n = #KEYS
local st = {}
local missing = {}
for i = 1, n do
  local b = (i - 1) * 9
  local gen = tonumber(ARGV[b + 1])
  local initial = tonumber(ARGV[b + 2])
  local period = tonumber(ARGV[b + 3])
  local refill = tonumber(ARGV[b + 4])
  local mode = tonumber(ARGV[b + 6])
  local s = redis.call('HMGET', KEYS[i], 'g', 'p', 'r')
  local g = tonumber(s[1])
  local p = tonumber(s[2]) or 0
  local r = tonumber(s[3])
  if g == nil or r == nil then
    if mode == 0 then
      missing[#missing + 1] = i
    elseif mode == 2 then
      g = tonumber(ARGV[b + 7])
      p = tonumber(ARGV[b + 8])
      r = tonumber(ARGV[b + 9])
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
  st[i] = { g, p, r }
end
if #missing > 0 then
  local out = { -1 }
  for j = 1, #missing do
    out[j + 1] = missing[j]
  end
  return out
end
local all = 1
for i = 1, n do
  if tonumber(ARGV[(i - 1) * 9 + 5]) > st[i][3] then
    all = 0
  end
end
local out = { all }
for i = 1, n do
  local cost = tonumber(ARGV[(i - 1) * 9 + 5])
  local a = 0
  if cost <= st[i][3] then
    a = 1
  end
  if all == 1 then
    st[i][3] = st[i][3] - cost
  end
  redis.call('HSET', KEYS[i], 'g', string.format('%.0f', st[i][1]), 'p', string.format('%.0f', st[i][2]), 'r', string.format('%.0f', st[i][3]))
  out[#out + 1] = a
  out[#out + 1] = st[i][3]
  out[#out + 1] = st[i][1]
  out[#out + 1] = st[i][2]
end
return out
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
