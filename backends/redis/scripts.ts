// Lua scripts run atomically on the server: no other command interleaves with one.

/**
 * Runs Lua scripts by their SHA (EVALSHA): each script is sent once (SCRIPT LOAD, on its first use,
 * shared by concurrent first calls), so each later call is one short command. A server that does not
 * know the script (restarted, SCRIPT FLUSH, or a cluster node the load did not reach) answers NOSCRIPT,
 * and the call is sent again as EVAL with the script's text, which runs it and leaves it in that
 * server's cache: one more round trip, on the node that owns the keys. A failed load is not kept.
 * Errors are the client's own.
 *
 * @example
 * const scripts = new ScriptRunner((args) => client.sendCommand(args));
 * await scripts.run('return KEYS[1]', ['k'], []); // 'k'
 */
export class ScriptRunner {
  private readonly shas = new Map<string, Promise<string>>();

  constructor(private readonly send: (args: string[]) => Promise<unknown>) {}

  async run(script: string, keys: readonly string[], args: readonly string[]): Promise<unknown> {
    let sha = this.shas.get(script);
    if (!sha) {
      const loading = this.send(['SCRIPT', 'LOAD', script]) as Promise<string>;
      this.shas.set(script, loading);
      loading.catch(() => this.forget(script, loading));
      sha = loading;
    }
    const rest = [String(keys.length), ...keys, ...args];
    try {
      return await this.send(['EVALSHA', await sha, ...rest]);
    } catch (err) {
      if (!String((err as Error)?.message).startsWith('NOSCRIPT')) throw err;
      return this.send(['EVAL', script, ...rest]);
    }
  }

  // Only the load that failed is dropped, never a newer one another call has started since.
  private forget(script: string, sha: Promise<string>): void {
    if (this.shas.get(script) === sha) this.shas.delete(script);
  }
}

/** KEYS: digest index. ARGV: record-key prefix. Returns the record JSON or nil. */
export const FIND_BY_HASH = `
local id = redis.call('GET', KEYS[1])
if not id then return false end
return redis.call('GET', ARGV[1] .. id)`;

/** KEYS: record, digest index, account set. ARGV: record JSON, id, channel, change JSON. */
export const INSERT = `
if redis.call('EXISTS', KEYS[1]) == 1 then return 'id' end
if redis.call('EXISTS', KEYS[2]) == 1 then return 'hash' end
redis.call('SET', KEYS[1], ARGV[1])
redis.call('SET', KEYS[2], ARGV[2])
redis.call('SADD', KEYS[3], ARGV[2])
redis.call('PUBLISH', ARGV[3], ARGV[4])
return 'ok'`;

/**
 * Compare-and-set of one record. KEYS: record. ARGV: the version the new record was computed from,
 * new record JSON, channel, change JSON. A revoked record is never overwritten, whatever the caller sent.
 */
export const UPDATE = `
local current = redis.call('GET', KEYS[1])
if not current then return 'missing' end
local record = cjson.decode(current)
if record.status == 'revoked' then return 'revoked' end
if tonumber(record.version) ~= tonumber(ARGV[1]) then return 'stale' end
redis.call('SET', KEYS[1], ARGV[2])
redis.call('PUBLISH', ARGV[3], ARGV[4])
return 'ok'`;

/**
 * Adds a flush of usage. KEYS: one usage hash per count, then one activity hash per key, then the
 * usage index (a sorted set: each usage hash's name, scored by the oldest day it holds as YYYYMMDD,
 * which `PRUNE_USAGE` reads). ARGV: count n, activity m, then n triples (field `day|outcome`,
 * increment, account id) and m pairs (last used at, ISO-8601; last used ip or ''). Counts are added
 * with HINCRBY, so flushes from any number of processes add up exactly; activity keeps the newest
 * time (ISO-8601 sorts as text).
 */
export const ADD_USAGE = `
local n = tonumber(ARGV[1])
local m = tonumber(ARGV[2])
local index = KEYS[n + m + 1]
local a = 3
for i = 1, n do
  redis.call('HINCRBY', KEYS[i], ARGV[a], ARGV[a + 1])
  redis.call('HSET', KEYS[i], '_account', ARGV[a + 2])
  local day = tonumber((string.gsub(string.sub(ARGV[a], 1, 10), '-', '')))
  local oldest = redis.call('ZSCORE', index, KEYS[i])
  if (not oldest) or tonumber(oldest) > day then redis.call('ZADD', index, day, KEYS[i]) end
  a = a + 3
end
for j = 1, m do
  local k = KEYS[n + j]
  local current = redis.call('HGET', k, 'at')
  if (not current) or current < ARGV[a] then
    redis.call('HSET', k, 'at', ARGV[a], 'ip', ARGV[a + 1])
  end
  a = a + 2
end
return 'ok'`;

/**
 * Appends an audit entry to its account's sorted set and, when it has a key, to the key's, and to the
 * time index that `PRUNE_AUDIT` reads. KEYS: the time index, the account's set, then the key's (if
 * any). ARGV: the member (`<id> <entry JSON>`), the entry's time (epoch ms), its index member (`<id>
 * <account> <key or ''>`, both as in the sets' names). Every score of a set is 0, so a set orders by
 * member, that is by id (fixed length, then a space, below every id character).
 */
export const APPEND_AUDIT = `
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[3])
for i = 2, #KEYS do redis.call('ZADD', KEYS[i], 0, ARGV[1]) end
return 'ok'`;

/**
 * `append_audit(kb, ab)`: adds entries to the time index and their sets, as {@link APPEND_AUDIT} adds
 * one, and returns the positions of the first key and argument after its own. KEYS[kb..]: per entry
 * the time index, then its account's set, then its key's (if it has one). ARGV[ab]: the number of
 * entries, then per entry its member, how many sets it goes to (1 or 2), its score in the time index
 * (`at` in epoch ms) and its member there.
 */
export const APPEND_AUDIT_FUNCTION = `
local function append_audit(kb, ab)
  local n = tonumber(ARGV[ab])
  local k = kb
  for i = 1, n do
    local a = ab + 4 * (i - 1)
    local member, sets = ARGV[a + 1], tonumber(ARGV[a + 2])
    redis.call('ZADD', KEYS[k], ARGV[a + 3], ARGV[a + 4])
    for j = 1, sets do redis.call('ZADD', KEYS[k + j], 0, member) end
    k = k + 1 + sets
  end
  return k, ab + 1 + 4 * n
end
`;
