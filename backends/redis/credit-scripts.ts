// The credit ledger's Lua scripts. Each call of the ledger is one script, and Redis runs a script
// atomically: no command of any other process interleaves with it, so holds from any number of
// processes never overdraw an account nor lose a credit.
//
// Every script gets the same five keys of one account, all in the account's hash slot:
//   KEYS[1] available balance (an integer string)   KEYS[2] open holds: sorted set, id -> expiry ms
//   KEYS[3] held amounts: hash, id -> amount, id..':key' -> the hold's key id, 'total' -> their sum
//   KEYS[4] entries: list, newest first             KEYS[5] top-up references already used: set
//
// Amounts travel as the caller's decimal text and change the balance through INCRBY/DECRBY (64-bit
// integers on the server); a Lua number only compares them. A Lua number printed by tostring or cjson
// keeps 14 digits, so no amount or balance is ever printed from one: balances are read back with GET.
// Each script answers its balance as that text.

// Lapses the account's expired holds before anything else, by the server's clock (TIME), so a hold
// whose process died returns its credits on the account's next call, whichever process makes it.
// `close` ends an open hold: it leaves the hold's keys and the held total (no key is left at 0).
const SWEEP = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local nowText = t[1] .. string.format('%03d', math.floor(tonumber(t[2]) / 1000))
local function balance() return redis.call('GET', KEYS[1]) or '0' end
local function close(id, amount)
  redis.call('HDEL', KEYS[3], id, id .. ':key')
  redis.call('ZREM', KEYS[2], id)
  if redis.call('HINCRBY', KEYS[3], 'total', '-' .. amount) == 0 then redis.call('HDEL', KEYS[3], 'total') end
end
for _, id in ipairs(redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now)) do
  local amount = redis.call('HGET', KEYS[3], id)
  redis.call('INCRBY', KEYS[1], amount)
  close(id, amount)
end
`;

/** Answers the available balance. */
export const BALANCE = `${SWEEP}
return balance()`;

/**
 * ARGV: amount, entry id, reference ('' for none). Answers {'ok' | 'duplicate' | 'overflow', balance}:
 * a reference already used credits nothing; credits (available and held) past 2^53 - 1 would not
 * survive JavaScript. Below that bound a Lua number holds every sum exactly.
 */
export const TOP_UP = `${SWEEP}
if ARGV[3] ~= '' and redis.call('SISMEMBER', KEYS[5], ARGV[3]) == 1 then return {'duplicate', balance()} end
local held = tonumber(redis.call('HGET', KEYS[3], 'total') or '0')
if tonumber(balance()) + held + tonumber(ARGV[1]) > 9007199254740991 then return {'overflow', balance()} end
if ARGV[3] ~= '' then redis.call('SADD', KEYS[5], ARGV[3]) end
redis.call('INCRBY', KEYS[1], ARGV[1])
local reference = nil
if ARGV[3] ~= '' then reference = ARGV[3] end
redis.call('LPUSH', KEYS[4], cjson.encode({ id = ARGV[2], kind = 'top_up', amount = ARGV[1],
  balance = balance(), reference = reference, at = nowText }))
return {'ok', balance()}`;

/**
 * ARGV: amount, hold id, ttl ms, key id ('' for none). Answers {'ok' | 'short', balance}: the amount
 * is taken from the available balance whole, or nothing is.
 */
export const HOLD = `${SWEEP}
if tonumber(balance()) < tonumber(ARGV[1]) then return {'short', balance()} end
redis.call('DECRBY', KEYS[1], ARGV[1])
redis.call('HSET', KEYS[3], ARGV[2], ARGV[1])
redis.call('HINCRBY', KEYS[3], 'total', ARGV[1])
if ARGV[4] ~= '' then redis.call('HSET', KEYS[3], ARGV[2] .. ':key', ARGV[4]) end
redis.call('ZADD', KEYS[2], now + tonumber(ARGV[3]), ARGV[2])
return {'ok', balance()}`;

/**
 * ARGV: hold id, amount to charge ('' for all of it), entry id. Closes the hold with one `charge`
 * entry (none for a charge of 0) and answers {'ok', balance, charged},
 * {'none', balance} for a hold that is not open (settled, released, lapsed or unknown), or
 * {'over', balance, held} when the amount is more than the hold (nothing changes).
 */
export const SETTLE = `${SWEEP}
local held = redis.call('HGET', KEYS[3], ARGV[1])
if not held then return {'none', balance()} end
local charge = held
if ARGV[2] ~= '' then charge = ARGV[2] end
if tonumber(charge) > tonumber(held) then return {'over', balance(), held} end
local keyId = redis.call('HGET', KEYS[3], ARGV[1] .. ':key') or nil
close(ARGV[1], held)
redis.call('INCRBY', KEYS[1], held)
redis.call('DECRBY', KEYS[1], charge)
if tonumber(charge) > 0 then
  redis.call('LPUSH', KEYS[4], cjson.encode({ id = ARGV[3], kind = 'charge', amount = '-' .. charge,
    balance = balance(), keyId = keyId, at = nowText }))
end
return {'ok', balance(), charge}`;

/** ARGV: hold id. Returns an open hold whole, writing no entry. Answers the balance. */
export const RELEASE = `${SWEEP}
local held = redis.call('HGET', KEYS[3], ARGV[1])
if held then
  close(ARGV[1], held)
  redis.call('INCRBY', KEYS[1], held)
end
return balance()`;

/** ARGV: the most entries to read. Answers them, newest first, as stored (JSON text). */
export const ENTRIES = `${SWEEP}
return redis.call('LRANGE', KEYS[4], 0, tonumber(ARGV[1]) - 1)`;

/**
 * Answers {balance, held, sum of every entry's amount}, read in one script (one moment). The entries
 * are read 1,000 at a time, so memory stays flat however many an account has; Redis serves nothing
 * else meanwhile, which is why this is a tool's call and not a request's. The sum is a Lua number,
 * exact here: added newest first, each partial sum is the total minus the balance and holds the
 * account had at some moment, both within 0..2^53 - 1 (`TOP_UP` keeps them there), so no partial sum
 * leaves the integers a double holds exactly; '%.0f' prints it whole (tostring would keep 14 digits).
 */
export const RECONCILE = `${SWEEP}
local sum = 0
local count = redis.call('LLEN', KEYS[4])
for first = 0, count - 1, 1000 do
  for _, text in ipairs(redis.call('LRANGE', KEYS[4], first, first + 999)) do
    sum = sum + tonumber(cjson.decode(text).amount)
  end
end
return {balance(), redis.call('HGET', KEYS[3], 'total') or '0', string.format('%.0f', sum)}`;
