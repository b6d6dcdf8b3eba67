import type { RateLimitDecision } from 'keygate';
import { BackendRateLimiter, type ConsumeArgs, type RateLimitLease, type TakeArgs } from 'keygate/store-kit';
import { requireMethods } from './client-shape.js';
import { validPrefix } from './prefix.js';
import { ScriptRunner } from './scripts.js';
import type { RedisCommandClient } from './throttle.js';

/**
 * Options of {@link RedisRateLimiter}.
 *
 * @example
 * const options: RedisRateLimiterOptions = { client, prefix: 'api:ratelimit:', timeoutMs: 100 };
 */
export interface RedisRateLimiterOptions {
  /**
   * A connected node-redis client (v4, v5 or v6). The caller owns it and closes it. node-redis 6 gives each
   * command a 5 s timeout armed with `AbortSignal.timeout`, which costs more CPU than the rest of the
   * request to a cached key; the limiter keeps its own deadline (`timeoutMs`), so a client made for it can
   * turn the client's off: `createClient({ url, commandOptions: { timeout: 0 } })`.
   */
  client: RedisCommandClient;
  /**
   * Prefix of every counter key: `<prefix><keyId>`. Each request touches one key, so a cluster needs no hash tag.
   *
   * @default 'keygate:ratelimit:'
   */
  prefix?: string;
  /**
   * Milliseconds to wait for Redis before `consume` rejects with `RateLimiterUnavailableError`.
   * The limiter declares it as its `deadline` capability, so `authenticate` arms no second timer.
   *
   * @default 250
   */
  timeoutMs?: number;
}

// Every member of {@link RedisRateLimiterOptions}: any other is refused (`unknown_option`).
const OPTION_NAMES = Object.keys({ client: true, prefix: true, timeoutMs: true } satisfies Record<
  keyof RedisRateLimiterOptions,
  true
>);

// One atomic script per request. The window is the counter key's own expiry, so Redis's clock alone
// decides when a window ends: processes with skewed clocks still share one window. KEYS[1]: the
// counter. ARGV: limit, cost, window (whole ms). Returns {allowed (1/0), used, ms until reset}.
// Costs go to Redis as the caller's decimal text, never through a Lua number (which prints 1e+15).
const CONSUME = `
local limit = tonumber(ARGV[1])
local cost = tonumber(ARGV[2])
local ttl = redis.call('PTTL', KEYS[1])
if ttl <= 0 then
  if cost <= limit then
    redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
    return {1, cost, tonumber(ARGV[3])}
  end
  redis.call('SET', KEYS[1], '0', 'PX', ARGV[3])
  return {0, 0, tonumber(ARGV[3])}
end
local used = tonumber(redis.call('GET', KEYS[1])) or 0
if used + cost > limit then return {0, used, ttl} end
if cost > 0 then used = redis.call('INCRBY', KEYS[1], ARGV[2]) end
return {1, used, ttl}`;

// The `leases` capability's take: the grant rule of `TakeRequest`, in one script. ARGV: limit, need,
// want, divisor, window (whole ms). Returns {granted, used, ms until reset, window end in Redis's epoch ms}.
const TAKE = `
local limit = tonumber(ARGV[1])
local need = tonumber(ARGV[2])
local ttl = redis.call('PTTL', KEYS[1])
local used = 0
if ttl <= 0 then
  ttl = tonumber(ARGV[5])
  redis.call('SET', KEYS[1], '0', 'PX', ARGV[5])
else
  used = tonumber(redis.call('GET', KEYS[1])) or 0
end
local remaining = math.max(0, limit - used)
local granted = 0
if remaining >= need then
  granted = math.min(remaining, math.max(need, math.min(tonumber(ARGV[3]), math.floor(remaining / tonumber(ARGV[4])))))
end
if granted > 0 then used = redis.call('INCRBY', KEYS[1], string.format('%d', granted)) end
local t = redis.call('TIME')
return {granted, used, ttl, tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) + ttl}`;

// The `leases` capability's give-back: uncounts ARGV[2] units when the open window is the one whose
// end is ARGV[1] (within half a window, ARGV[3] ms). Returns the units uncounted.
const GIVE_BACK = `
local ttl = redis.call('PTTL', KEYS[1])
if ttl <= 0 then return 0 end
local t = redis.call('TIME')
local ends = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) + ttl
if math.abs(ends - tonumber(ARGV[1])) * 2 >= tonumber(ARGV[3]) then return 0 end
local back = math.min(tonumber(redis.call('GET', KEYS[1])) or 0, tonumber(ARGV[2]))
if back > 0 then redis.call('DECRBY', KEYS[1], string.format('%d', back)) end
return back`;

/**
 * A rate limiter in Redis, exact across every process that shares the server and the prefix: one
 * counter per key (`<prefix><keyId>`) that expires with its window, read and changed by one Lua
 * script per request, so a request costs one round trip and concurrent requests never over-count.
 * The window opens at the key's first request and is timed by Redis's clock (see `RateLimiter` for
 * what that allows at window boundaries). A consume that timed out may still have been counted.
 *
 * @example
 * const client = await createClient({ url: 'redis://127.0.0.1:6379' }).connect();
 * const limiter = new RedisRateLimiter({ client });
 * const { allowed, remaining } = await limiter.consume(key.id, { limit: 100, windowMs: 60_000 }, 1);
 */
export class RedisRateLimiter extends BackendRateLimiter {
  readonly prefix: string;
  private readonly scripts: ScriptRunner;

  constructor(options: RedisRateLimiterOptions) {
    requireMethods(options?.client, ['sendCommand'], 'client', 'a node-redis client (createClient() from "redis")');
    const prefix = validPrefix(options.prefix ?? 'keygate:ratelimit:');
    super('RedisRateLimiter', options.timeoutMs, 250, { options, names: OPTION_NAMES });
    const client = options.client;
    this.scripts = new ScriptRunner((args) => client.sendCommand(args));
    this.prefix = prefix;
  }

  protected async count(args: ConsumeArgs): Promise<RateLimitDecision> {
    const argv = [String(args.limit), String(args.cost), String(args.windowMs)];
    const [allowed, used, resetMs] = numbers(await this.scripts.run(CONSUME, [this.prefix + args.keyId], argv), 3);
    return this.decision(args.limit, used, allowed === 1, resetMs);
  }

  protected async grant(args: TakeArgs): Promise<RateLimitLease> {
    const argv = [args.limit, args.cost, args.want, args.divisor, args.windowMs].map(String);
    const [granted, used, resetMs, window] = numbers(await this.scripts.run(TAKE, [this.prefix + args.keyId], argv), 4);
    return this.lease(args.limit, granted, used, resetMs, window);
  }

  protected uncount(args: ConsumeArgs, window: number): Promise<unknown> {
    const argv = [String(window), String(args.cost), String(args.windowMs)];
    return this.scripts.run(GIVE_BACK, [this.prefix + args.keyId], argv);
  }
}

/**
 * A script's reply of `length` numbers; anything else becomes the cause of a
 * `RateLimiterUnavailableError`: the server, not the caller, is at fault.
 */
function numbers(reply: unknown, length: 3 | 4): [number, number, number, number] {
  const values = Array.isArray(reply) ? reply.map(Number) : [];
  if (values.length < length || !values.every(Number.isFinite)) {
    throw new Error(`unexpected reply from the rate-limit script: ${JSON.stringify(reply)}`);
  }
  return values as [number, number, number, number];
}
