/**
 * The one Lua script a rate-limit decision runs: GCRA's comparison and commit for every
 * pair, atomically, with Redis `TIME` as the clock so instances with skewed clocks agree.
 * The decision fields (remaining, reset, retry-after) are then computed in JavaScript
 * by `@keyset/core`'s `evaluateGcra` from what the script returns, so the memory and
 * Redis stores share one implementation of the arithmetic.
 *
 * KEYS: one per pair. ARGV[1]: cost; ARGV[2i], ARGV[2i+1]: pair i's emission interval
 * and burst allowance, in µs. Returns `{ now, allowed, stored_1, …, stored_n }` (µs;
 * `stored_i` is 0 when the key is absent). Every number is an integer below 2^53, exact
 * in Lua's doubles; `%.0f` writes them without the exponent `tostring` would use.
 * @module
 */
export const GCRA_SCRIPT = `
if redis.replicate_commands then redis.replicate_commands() end
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000000 + tonumber(time[2])
local cost = tonumber(ARGV[1])
local result = { now, 1 }
local nexts = {}
for i = 1, #KEYS do
  local emission = tonumber(ARGV[2 * i])
  local burst = tonumber(ARGV[2 * i + 1])
  local stored = tonumber(redis.call('GET', KEYS[i]) or '0') or 0
  local tat = stored
  if tat < now then tat = now end
  nexts[i] = tat + cost * emission
  if nexts[i] - burst > now then result[2] = 0 end
  result[i + 2] = stored
end
if result[2] == 1 and cost > 0 then
  for i = 1, #KEYS do
    -- The key expires exactly when its TAT passes: then it is worth nothing.
    redis.call('SET', KEYS[i], string.format('%.0f', nexts[i]), 'PX', string.format('%.0f', math.ceil((nexts[i] - now) / 1000)))
  end
end
return result
`;
