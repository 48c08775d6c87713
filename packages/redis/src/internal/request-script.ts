/**
 * The one script that decides a whole request (`createRedisRequestStore`): the GCRA pairs
 * of the key and its owner, their in-flight leases and their quotas, atomically, in the
 * order and with the outcomes of the three separate scripts run one after another
 * (`gcra-script.ts`, `lease-scripts.ts`, `quota-script.ts`, whose Lua it repeats):
 *
 * 1. the quota counts are read; with `missing` mode 0 a lost count answers `{ -1, i… }`
 *    before anything changes (the store seeds it from the durable store and calls again);
 * 2. GCRA with cost 1 on every pair: refused, nothing is written;
 * 3. the pairs are written (the request counts against the limits), then each lease set is
 *    pruned and counted: one at its cap refuses, no lease is taken and no credit spent;
 * 4. the quotas are decided all-or-nothing and written (refills that fell due included);
 *    refused, no lease is taken;
 * 5. every lease is taken.
 *
 * Observed (shadow) limits, flagged `1`, never refuse. Each is decided after the enforced
 * ones of its step, as it would be if enforced, while no observed limit before it would
 * refuse (`would`): the observed pairs are written only when all of them admit; an observed
 * lease set at its cap is reported and takes no lease; the observed quotas are spent
 * together only when all of them cover the cost; the observed leases are taken only when
 * nothing observed would refuse.
 *
 * KEYS: the n GCRA keys, the m quota hashes, the k lease sets, all in one hash tag.
 * ARGV: n, m, k; 3 per pair (emission interval and burst allowance, µs, observed flag);
 * 9 per quota (as `QUOTA_SCRIPT`); 3 per lease (id, max, ttl ms); then the m quotas' and
 * the k leases' observed flags. Returns `{ now, limits allowed, lease refused (0-based, or
 * -1), quotas decided, observed lease at its cap (0-based, or -1), observed quotas decided,
 * stored TAT₁…ₙ, then 4 per quota (allowed, remaining, generation, period) }`. Every number
 * is an integer below 2^53.
 * @module
 */
export const REQUEST_SCRIPT = `
if redis.replicate_commands then redis.replicate_commands() end
local n = tonumber(ARGV[1])
local m = tonumber(ARGV[2])
local k = tonumber(ARGV[3])
local qa = 3 + 3 * n
local la = qa + 9 * m
local fa = la + 3 * k
local st = {}
local missing = {}
for i = 1, m do
  local b = qa + (i - 1) * 9
  local gen = tonumber(ARGV[b + 1])
  local initial = tonumber(ARGV[b + 2])
  local period = tonumber(ARGV[b + 3])
  local refill = tonumber(ARGV[b + 4])
  local mode = tonumber(ARGV[b + 6])
  local s = redis.call('HMGET', KEYS[n + i], 'g', 'p', 'r')
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
  st[i] = { g, p, r, tonumber(ARGV[b + 5]) }
end
if #missing > 0 then
  local out = { -1 }
  for j = 1, #missing do
    out[j + 1] = missing[j]
  end
  return out
end
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000000 + tonumber(time[2])
local out = { now, 1, -1, 0, -1, 0 }
local nexts = {}
local would = 0
for i = 1, n do
  local emission = tonumber(ARGV[1 + 3 * i])
  local burst = tonumber(ARGV[2 + 3 * i])
  local stored = tonumber(redis.call('GET', KEYS[i]) or '0') or 0
  local tat = stored
  if tat < now then tat = now end
  nexts[i] = tat + emission
  if nexts[i] - burst > now then
    if ARGV[3 + 3 * i] == '1' then would = 1 else out[2] = 0 end
  end
  out[6 + i] = stored
end
if out[2] == 0 then
  return out
end
for i = 1, n do
  if would == 0 or ARGV[3 + 3 * i] ~= '1' then
    redis.call('SET', KEYS[i], string.format('%.0f', nexts[i]), 'PX', string.format('%.0f', math.ceil((nexts[i] - now) / 1000)))
  end
end
local nowMs = math.floor(now / 1000)
for j = 1, k do
  local key = KEYS[n + m + j]
  if ARGV[fa + m + j] ~= '1' then
    redis.call('ZREMRANGEBYSCORE', key, '-inf', nowMs)
    if redis.call('ZCARD', key) >= tonumber(ARGV[la + 3 * (j - 1) + 2]) then
      out[3] = j - 1
      return out
    end
  end
end
for j = 1, k do
  local key = KEYS[n + m + j]
  if would == 0 and ARGV[fa + m + j] == '1' then
    redis.call('ZREMRANGEBYSCORE', key, '-inf', nowMs)
    if redis.call('ZCARD', key) >= tonumber(ARGV[la + 3 * (j - 1) + 2]) then
      out[5] = j - 1
      would = 1
    end
  end
end
if m > 0 then
  out[4] = 1
  local all = 1
  local oall = 1
  for i = 1, m do
    if st[i][4] > st[i][3] then
      if ARGV[fa + i] == '1' then oall = 0 else all = 0 end
    end
  end
  if all == 1 and would == 0 then
    out[6] = 1
  end
  for i = 1, m do
    local a = 0
    if st[i][4] <= st[i][3] then
      a = 1
    end
    if ARGV[fa + i] == '1' then
      if out[6] == 1 and oall == 1 then
        st[i][3] = st[i][3] - st[i][4]
      end
    elseif all == 1 then
      st[i][3] = st[i][3] - st[i][4]
    end
    redis.call('HSET', KEYS[n + i], 'g', string.format('%.0f', st[i][1]), 'p', string.format('%.0f', st[i][2]), 'r', string.format('%.0f', st[i][3]))
    out[#out + 1] = a
    out[#out + 1] = st[i][3]
    out[#out + 1] = st[i][1]
    out[#out + 1] = st[i][2]
  end
  if all == 0 then
    return out
  end
  if out[6] == 1 and oall == 0 then
    would = 1
  end
end
for j = 1, k do
  if would == 0 or ARGV[fa + m + j] ~= '1' then
    local key = KEYS[n + m + j]
    local b = la + 3 * (j - 1)
    redis.call('ZADD', key, nowMs + tonumber(ARGV[b + 3]), ARGV[b + 1])
    local last = redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')
    redis.call('PEXPIREAT', key, tonumber(last[2]))
  end
end
return out
`;

/** KEYS: the lease sets of one request (one hash tag); ARGV: the lease id in each, in order. */
export const RELEASE_ALL_SCRIPT = `
for i = 1, #KEYS do
  redis.call('ZREM', KEYS[i], ARGV[i])
end
return #KEYS
`;
