// The outbox's Lua scripts. Every one runs atomically on the server: a claim and a concurrent claim,
// complete or fail never interleave, so one delivery is never held by two leases at once.
//
// Keys (P the prefix): `P outbox:events` (hash: event id -> event JSON), `P outbox:by-time` (sorted
// set: event ids, scored by the event's time in ms, which a prune reads), `P webhooks:deliveries`
// (hash: delivery id -> delivery JSON with its lease), `P webhooks:due` (sorted set: delivery id,
// scored by when it may next be claimed: its next attempt, or its lease's end while leased),
// `P webhooks:endpoint-keys` (hash: endpoint id -> the name of its account's endpoint hash),
// `P webhooks:endpoints:<account>` (hash: endpoint id -> endpoint JSON, secret included) and
// `P webhooks:log:<account>` (sorted set, score 0: the account's delivery ids, in id order).

/**
 * `append_events(kb, ab)`: stores events and their deliveries. KEYS[kb..kb+3]: events hash,
 * deliveries hash, due set, time index; then per event its account's endpoint hash and log set.
 * ARGV[ab]: the number of events, then per event: id, JSON, type, account id, time in ms, time ISO 8601.
 */
export const APPEND_EVENTS_FUNCTION = `
local function append_events(kb, ab)
  local n = tonumber(ARGV[ab])
  for i = 0, n - 1 do
    local a = ab + 1 + i * 6
    local id, etype, account, atms, atiso = ARGV[a], ARGV[a + 2], ARGV[a + 3], ARGV[a + 4], ARGV[a + 5]
    local hooks = {}
    if redis.call('HSETNX', KEYS[kb], id, ARGV[a + 1]) == 1 then
      redis.call('ZADD', KEYS[kb + 3], atms, id)
      hooks = redis.call('HVALS', KEYS[kb + 4 + i * 2])
    end
    for _, raw in ipairs(hooks) do
      local e = cjson.decode(raw)
      local takes = false
      for _, t in ipairs(e.eventTypes) do
        if t == '*' or t == etype then takes = true end
      end
      if e.enabled and takes then
        local did = id .. ':' .. e.id
        local d = { id = did, eventId = id, endpointId = e.id, accountId = account, eventType = etype,
          status = 'pending', attempts = 0, lastStatusCode = cjson.null, lastError = cjson.null,
          lastAttemptAt = cjson.null, nextAttemptAt = atiso, createdAt = atiso, deliveredAt = cjson.null,
          lease = cjson.null }
        redis.call('HSET', KEYS[kb + 1], did, cjson.encode(d))
        redis.call('ZADD', KEYS[kb + 2], atms, did)
        redis.call('ZADD', KEYS[kb + 5 + i * 2], 0, did)
      end
    end
  end
end
`;

/** Publishes events on their own (an id already stored is skipped). KEYS and ARGV as `append_events(1, 1)`; returns the first event's stored JSON. */
export const PUBLISH = `${APPEND_EVENTS_FUNCTION}
append_events(1, 1)
return redis.call('HGET', KEYS[1], ARGV[2])`;

/**
 * Claims due deliveries. KEYS: deliveries hash, due set, events hash, endpoint-keys hash. ARGV: now
 * (ms), lease end (ms), limit, lease token. Deliveries of a removed or disabled endpoint end as
 * failed on the way. Returns a flat list: delivery JSON, event JSON, endpoint JSON, per claim.
 */
export const CLAIM = `
local out = {}
local count = 0
local limit = tonumber(ARGV[3])
while count < limit do
  local ids = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', ARGV[1], 'LIMIT', 0, limit - count)
  if #ids == 0 then break end
  for _, id in ipairs(ids) do
    local raw = redis.call('HGET', KEYS[1], id)
    if not raw then
      redis.call('ZREM', KEYS[2], id)
    else
      local d = cjson.decode(raw)
      local hookKey = redis.call('HGET', KEYS[4], d.endpointId)
      local hook = hookKey and redis.call('HGET', hookKey, d.endpointId)
      local e = hook and cjson.decode(hook)
      if d.status ~= 'pending' or not e or not e.enabled then
        if d.status == 'pending' then
          d.status = 'failed'
          d.nextAttemptAt = cjson.null
          d.lease = cjson.null
          d.lastError = e and 'endpoint_disabled' or 'endpoint_removed'
          redis.call('HSET', KEYS[1], id, cjson.encode(d))
        end
        redis.call('ZREM', KEYS[2], id)
      else
        d.lease = ARGV[4]
        local encoded = cjson.encode(d)
        redis.call('HSET', KEYS[1], id, encoded)
        redis.call('ZADD', KEYS[2], ARGV[2], id)
        out[#out + 1] = encoded
        out[#out + 1] = redis.call('HGET', KEYS[3], d.eventId)
        out[#out + 1] = hook
        count = count + 1
      end
    end
  end
end
return out`;

/**
 * Records an attempt's outcome under its lease token. KEYS: deliveries hash, due set, endpoint-keys
 * hash. ARGV: delivery id, token, now (ms), now (ISO), status code or '', error or '', outcome
 * ('delivered', 'retry' or 'failed'), next attempt (ms) or '', next attempt (ISO) or '',
 * disable-after (ms). Returns false when the lease was lost; else 'ok', or the endpoint's JSON when
 * this failure disabled it.
 */
export const RECORD = `
local raw = redis.call('HGET', KEYS[1], ARGV[1])
if not raw then return false end
local d = cjson.decode(raw)
if d.status ~= 'pending' or d.lease ~= ARGV[2] then return false end
local now = tonumber(ARGV[3])
d.attempts = d.attempts + 1
d.lastStatusCode = ARGV[5] == '' and cjson.null or tonumber(ARGV[5])
d.lastError = ARGV[6] == '' and cjson.null or ARGV[6]
d.lastAttemptAt = ARGV[4]
d.lease = cjson.null
if ARGV[7] == 'retry' then
  d.nextAttemptAt = ARGV[9]
  redis.call('ZADD', KEYS[2], ARGV[8], ARGV[1])
else
  d.status = ARGV[7]
  d.nextAttemptAt = cjson.null
  if ARGV[7] == 'delivered' then d.deliveredAt = ARGV[4] end
  redis.call('ZREM', KEYS[2], ARGV[1])
end
redis.call('HSET', KEYS[1], ARGV[1], cjson.encode(d))
local hookKey = redis.call('HGET', KEYS[3], d.endpointId)
local hook = hookKey and redis.call('HGET', hookKey, d.endpointId)
if not hook then return 'ok' end
local e = cjson.decode(hook)
local disabled = false
if ARGV[7] == 'delivered' then
  e.failingSince = nil
else
  if type(e.failingSince) ~= 'number' then e.failingSince = now end
  if e.enabled and now - e.failingSince >= tonumber(ARGV[10]) then
    e.enabled = false
    e.disabledAt = ARGV[4]
    disabled = true
  end
end
local encoded = cjson.encode(e)
redis.call('HSET', hookKey, d.endpointId, encoded)
if disabled then return encoded end
return 'ok'`;

/** Adds an endpoint. KEYS: its account's endpoint hash, endpoint-keys hash. ARGV: id, JSON. */
export const ADD_ENDPOINT = `
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('HSET', KEYS[2], ARGV[1], KEYS[1])
return 'ok'`;

/**
 * Changes an endpoint. KEYS: its account's endpoint hash. ARGV: id, url or '', event types JSON or
 * '', enabled ('1', '0' or ''), now (ISO). Returns the endpoint's JSON, or false when there is none.
 */
export const UPDATE_ENDPOINT = `
local raw = redis.call('HGET', KEYS[1], ARGV[1])
if not raw then return false end
local e = cjson.decode(raw)
if ARGV[2] ~= '' then e.url = ARGV[2] end
if ARGV[3] ~= '' then e.eventTypes = cjson.decode(ARGV[3]) end
if ARGV[4] == '1' then
  if not e.enabled then e.failingSince = nil end
  e.enabled = true
  e.disabledAt = cjson.null
elseif ARGV[4] == '0' then
  if e.enabled then e.disabledAt = ARGV[5] end
  e.enabled = false
end
local encoded = cjson.encode(e)
redis.call('HSET', KEYS[1], ARGV[1], encoded)
return encoded`;

/** Removes an endpoint. KEYS: its account's endpoint hash, endpoint-keys hash. ARGV: id. */
export const REMOVE_ENDPOINT = `
if redis.call('HDEL', KEYS[1], ARGV[1]) == 0 then return 0 end
redis.call('HDEL', KEYS[2], ARGV[1])
return 1`;
