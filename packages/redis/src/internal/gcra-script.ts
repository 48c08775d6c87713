/**
 * The one Lua script a rate-limit decision runs: GCRA's comparison and commit for every
 * pair, atomically, with Redis `TIME` as the clock so instances with skewed clocks agree.
 * The decision fields (remaining, reset, retry-after) are then computed in JavaScript
 * by `@keyset/core`'s `evaluateGcra` from what the script returns, so the memory and
 * Redis stores share one implementation of the arithmetic.
 *
 * KEYS: one per pair. ARGV[1]: cost; ARGV[3i-1], ARGV[3i], ARGV[3i+1]: pair i's emission
 * interval and burst allowance, in µs, and `1` for an observed (shadow) pair, else `0`.
 * The enforced pairs decide (`allowed`); once they admit, the observed pairs are written
 * only when every one of them admits too (`evaluateGcra`'s rule). Returns `{ now, allowed,
 * stored_1, …, stored_n }` (µs; `stored_i` is 0 when the key is absent). Every number is an integer below 2^53, exact
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
local shadow = 1
for i = 1, #KEYS do
  local emission = tonumber(ARGV[3 * i - 1])
  local burst = tonumber(ARGV[3 * i])
  local stored = tonumber(redis.call('GET', KEYS[i]) or '0') or 0
  local tat = stored
  if tat < now then tat = now end
  nexts[i] = tat + cost * emission
  if nexts[i] - burst > now then
    if ARGV[3 * i + 1] == '1' then shadow = 0 else result[2] = 0 end
  end
  result[i + 2] = stored
end
if result[2] == 1 and cost > 0 then
  for i = 1, #KEYS do
    if shadow == 1 or ARGV[3 * i + 1] ~= '1' then
      -- The key expires exactly when its TAT passes: then it is worth nothing.
      redis.call('SET', KEYS[i], string.format('%.0f', nexts[i]), 'PX', string.format('%.0f', math.ceil((nexts[i] - now) / 1000)))
    end
  end
end
return result
`;
