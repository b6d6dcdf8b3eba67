import { InvalidInputError, type RateLimit, type RateLimitDecision, type RateLimiter } from 'keygate';
import {
  CAPABILITIES,
  type Capabilities,
  type Capable,
  validConsumeArgs,
  validTimeoutMs,
  withLimiterDeadline,
} from 'keygate/store-kit';
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
export class RedisRateLimiter implements RateLimiter, Capable {
  /** Its `deadline`: each `consume` settles within `timeoutMs`. */
  declare readonly [CAPABILITIES]: Capabilities;
  readonly prefix: string;
  /** Milliseconds a `consume` may take before it rejects. */
  readonly timeoutMs: number;
  private readonly scripts: ScriptRunner;

  constructor(options: RedisRateLimiterOptions) {
    if (typeof options?.client?.sendCommand !== 'function') {
      throw new InvalidInputError('client', 'client must be a node-redis client (createClient() from "redis")');
    }
    const prefix = validPrefix(options.prefix ?? 'keygate:ratelimit:');
    const timeoutMs = validTimeoutMs(options.timeoutMs, 250);
    const client = options.client;
    this.scripts = new ScriptRunner((args) => client.sendCommand(args));
    this.prefix = prefix;
    this.timeoutMs = timeoutMs;
    this[CAPABILITIES] = { deadline: this };
  }

  /**
   * Counts `cost` units against `keyId`. Rejects with `InvalidInputError` for bad arguments and with
   * `RateLimiterUnavailableError` when Redis fails or does not answer within `timeoutMs`.
   *
   * @example
   * await limiter.consume('key_1', { limit: 10, windowMs: 1000 }, 1); // { allowed: true, limit: 10, remaining: 9, resetMs: 1000 }
   */
  async consume(keyId: string, limit: RateLimit, cost: number): Promise<RateLimitDecision> {
    const args = validConsumeArgs(keyId, limit, cost);
    const argv = [String(args.limit), String(args.cost), String(args.windowMs)];
    return withLimiterDeadline('RedisRateLimiter', this.timeoutMs, async () =>
      decisionOf(await this.scripts.run(CONSUME, [this.prefix + args.keyId], argv), args.limit),
    );
  }
}

function decisionOf(reply: unknown, limit: number): RateLimitDecision {
  const [allowed, used, resetMs] = Array.isArray(reply) ? reply.map(Number) : [];
  if (used === undefined || resetMs === undefined || !Number.isFinite(used) || !Number.isFinite(resetMs)) {
    // Becomes the cause of a RateLimiterUnavailableError: the server, not the caller, is at fault.
    throw new Error(`unexpected reply from the rate-limit script: ${JSON.stringify(reply)}`);
  }
  return { allowed: allowed === 1, limit, remaining: Math.max(0, limit - used), resetMs: Math.max(0, resetMs) };
}
