// The Lua scripts that prune (docs/guide/retention.md). Each handles one bounded batch, atomically;
// the caller runs the next batch in a new script, so Redis serves other clients in between. Each finds
// what to delete through a sorted set its writes keep (P is the store's prefix):
// `P audit-by-time` (audit entries by time), `P usage-by-day` (usage hashes by the oldest day they
// hold) and `P outbox:by-time` (outbox events by time). Keys reached by a name read from an index share
// the prefix's slot on a cluster (its hash tag), like the claim's endpoint hashes.

/**
 * Deletes a batch of audit entries older than a time. KEYS: the time index. ARGV: the time (epoch
 * ms, exclusive), the batch size, the store's prefix. Each index member is `<id> <account> <key or
 * ''>`; the entry's member (`<id> <JSON>`) is removed from its account's set and its key's by the
 * lexicographic range of its id. Returns how many entries it deleted.
 */
export const PRUNE_AUDIT = `
local members = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', '(' .. ARGV[1], 'LIMIT', 0, tonumber(ARGV[2]))
for _, m in ipairs(members) do
  local id, account, key = string.match(m, '^(%S+) (%S+) (%S*)$')
  if id then
    local from, to = '[' .. id .. ' ', '(' .. id .. '!'
    local set = ARGV[3] .. 'audit:' .. account
    redis.call('ZREMRANGEBYLEX', set, from, to)
    if key ~= '' then redis.call('ZREMRANGEBYLEX', set .. ':' .. key, from, to) end
  end
  redis.call('ZREM', KEYS[1], m)
end
return #members`;

/**
 * Deletes the counts of the days before a day from a batch of usage hashes. KEYS: the usage index
 * (hash name, scored by the oldest day it holds as YYYYMMDD). ARGV: the first day kept as YYYYMMDD
 * and as YYYY-MM-DD, the batch size. A hash left without a count is deleted and leaves the index;
 * otherwise its score becomes its oldest day left. Returns { hashes looked at, counts deleted }.
 */
export const PRUNE_USAGE = `
local hashes = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', '(' .. ARGV[1], 'LIMIT', 0, tonumber(ARGV[3]))
local deleted = 0
for _, h in ipairs(hashes) do
  local oldest = nil
  for _, field in ipairs(redis.call('HKEYS', h)) do
    local bar = string.find(field, '|', 1, true)
    if bar then
      local day = string.sub(field, 1, bar - 1)
      if day < ARGV[2] then
        redis.call('HDEL', h, field)
        deleted = deleted + 1
      elseif (not oldest) or day < oldest then
        oldest = day
      end
    end
  end
  if oldest then
    redis.call('ZADD', KEYS[1], tonumber((string.gsub(oldest, '-', ''))), h)
  else
    redis.call('DEL', h)
    redis.call('ZREM', KEYS[1], h)
  end
end
return { #hashes, deleted }`;

/**
 * Deletes the events of a page that ended before a time, with their deliveries. KEYS: events hash,
 * deliveries hash, due set, time index, then per event its account's delivery log (any key of the
 * slot for an event no longer stored). ARGV: the time (ISO 8601, exclusive), then the event ids. An
 * event stays when one of its deliveries (`<event id>:<endpoint id>` in the log) is pending, or was
 * delivered, last attempted or created at or after the time. Returns { events that left the index,
 * rows deleted (events and deliveries) }.
 */
export const PRUNE_EVENTS = `
local left, deleted = 0, 0
for i = 2, #ARGV do
  local id, log = ARGV[i], KEYS[3 + i]
  if redis.call('HEXISTS', KEYS[1], id) == 0 then
    redis.call('ZREM', KEYS[4], id)
    left = left + 1
  else
    local ids = redis.call('ZRANGEBYLEX', log, '[' .. id .. ':', '(' .. id .. ';')
    local keep = false
    for _, did in ipairs(ids) do
      local raw = redis.call('HGET', KEYS[2], did)
      if raw then
        local d = cjson.decode(raw)
        local last = d.deliveredAt
        if type(last) ~= 'string' then last = d.lastAttemptAt end
        if type(last) ~= 'string' then last = d.createdAt end
        if d.status == 'pending' or last >= ARGV[1] then keep = true end
      end
    end
    if not keep then
      for _, did in ipairs(ids) do
        deleted = deleted + redis.call('HDEL', KEYS[2], did)
        redis.call('ZREM', KEYS[3], did)
        redis.call('ZREM', log, did)
      end
      redis.call('HDEL', KEYS[1], id)
      redis.call('ZREM', KEYS[4], id)
      left = left + 1
      deleted = deleted + 1
    end
  end
end
return { left, deleted }`;
