import { InvalidInputError } from 'keygate';
import {
  type AttemptWindow,
  checkOptionNames,
  type SharedAttemptCounter,
  type SharedReservation,
} from 'keygate/store-kit';
import { requireMethods } from './client-shape.js';
import { ScriptRunner } from './scripts.js';

/**
 * The part of a Redis client the counter, the rate limiter, the credit ledger and the dashboard store
 * use: a node-redis client (v4, v5 or v6) as it is, or a Redis Cluster or ioredis client through
 * `fromNodeRedisCluster` or `fromIoredis`.
 */
export interface RedisCommandClient {
  /** Sends one command, its name first (`['GET', 'k']`), and answers the reply. */
  sendCommand(args: string[]): Promise<unknown>;
  /**
   * True when the commands go to a Redis Cluster (what `fromNodeRedisCluster`, and `fromIoredis` over
   * an ioredis `Cluster`, return): the key store and dashboard store then default their prefix to
   * `'{keygate}:'` and refuse one without a hash tag. @default undefined (one server)
   */
  readonly cluster?: boolean;
}

/** Options of {@link RedisAttemptCounter}. */
export interface RedisAttemptCounterOptions {
  /** A connected node-redis client. The caller owns it and closes it. */
  client: RedisCommandClient;
  /** Prefix of every counter key. @default 'keygate:throttle:' */
  prefix?: string;
}

// Every member of {@link RedisAttemptCounterOptions}: any other is refused (`unknown_option`).
const OPTION_NAMES = Object.keys({ client: true, prefix: true } satisfies Record<
  keyof RedisAttemptCounterOptions,
  true
>);

// Each script runs atomically on the server. KEYS[1] counts a bucket's failures and expires with its
// window; KEYS[2] is a sorted set of the bucket's reserved attempts, scored by when each one lapses
// (a process that dies mid-lookup leaves a reservation that lapses by itself after one window).
// Both are named `<prefix>{<bucket>}...`: the bucket is their hash tag, so a Redis Cluster keeps a
// bucket's two keys in one slot and spreads the buckets over its masters.

// One failure: INCR and PEXPIRE together, so that a counter is never left without an expiry (a crash
// between the two commands would otherwise lock a client out for good).
const COUNT_FAILURE = `
local n = redis.call('INCR', KEYS[1])
local ttl = redis.call('PTTL', KEYS[1])
if n == 1 or ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return {n, ttl}`;

const READ = `
local n = redis.call('GET', KEYS[1])
if not n then return false end
return {tonumber(n), redis.call('PTTL', KEYS[1])}`;

// ARGV: max, window ms, reservation id. Granted (1) only while failures plus live reservations < max.
const RESERVE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local max = tonumber(ARGV[1])
local f = tonumber(redis.call('GET', KEYS[1]) or '0')
local ttl = redis.call('PTTL', KEYS[1])
if f < max then
  redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
  if f + redis.call('ZCARD', KEYS[2]) < max then
    redis.call('ZADD', KEYS[2], now + tonumber(ARGV[2]), ARGV[3])
    redis.call('PEXPIRE', KEYS[2], ARGV[2])
    return {1, f, ttl}
  end
end
return {0, f, ttl}`;

// ARGV: failed (1 or 0), window ms, reservation id. Ends a reservation; a failed one is counted.
const SETTLE = `
redis.call('ZREM', KEYS[2], ARGV[3])
if ARGV[1] == '1' then
  local n = redis.call('INCR', KEYS[1])
  if n == 1 or redis.call('PTTL', KEYS[1]) < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
end
return 1`;

function unexpected(): Error {
  return new Error('unexpected reply from the attempt counter script');
}

function windowOf(count: unknown, ttl: unknown): AttemptWindow {
  const n = Number(count);
  const resetMs = Number(ttl);
  if (!Number.isInteger(n) || !Number.isInteger(resetMs)) throw unexpected();
  // A key without expiry (-1) or without a window yet (-2) is reported as 1 s.
  return { count: n, resetMs: resetMs > 0 ? resetMs : 1000 };
}

function triple(reply: unknown, length: number): unknown[] {
  if (!Array.isArray(reply) || reply.length !== length) throw unexpected();
  return reply;
}

/**
 * Failed-attempt counts in Redis, shared by every instance that uses the same prefix: pass it as
 * `shared` to `FailedAttemptThrottle`. Per client bucket, a counter `<prefix>{<bucket>}` that expires
 * with its window and a set `<prefix>{<bucket>}:reserved` of attempts whose lookup is still running
 * (the bucket is the keys' hash tag: on a Redis Cluster both sit in one slot, and buckets spread over
 * the masters); when Redis is down the throttle decides with each process's own counts.
 *
 * @example
 * const client = await createClient({ url: 'redis://127.0.0.1:6379' }).connect();
 * const throttle = new FailedAttemptThrottle({ max: 10, windowMs: 60_000, shared: new RedisAttemptCounter({ client }) });
 * app.use(apiKeyAuth({ store, throttle }));
 */
export class RedisAttemptCounter implements SharedAttemptCounter {
  readonly prefix: string;
  private readonly scripts: ScriptRunner;
  // Reservation ids: unique per counter object and call, no randomness needed per request.
  private readonly instance = Math.random().toString(36).slice(2, 10);
  private sequence = 0;

  constructor(options: RedisAttemptCounterOptions) {
    checkOptionNames(options, OPTION_NAMES, 'RedisAttemptCounter');
    requireMethods(options?.client, ['sendCommand'], 'client', 'a node-redis client (createClient() from "redis")');
    const client = options.client;
    this.scripts = new ScriptRunner((args) => client.sendCommand(args));
    this.prefix = options.prefix ?? 'keygate:throttle:';
    if (typeof this.prefix !== 'string') throw new InvalidInputError('prefix', 'prefix must be a string');
  }

  private run(script: string, bucket: string, args: string[]): Promise<unknown> {
    const counter = `${this.prefix}{${bucket}}`;
    return this.scripts.run(script, [counter, `${counter}:reserved`], args);
  }

  async increment(bucket: string, windowMs: number): Promise<AttemptWindow> {
    const [count, ttl] = triple(await this.run(COUNT_FAILURE, bucket, [String(windowMs)]), 2);
    return windowOf(count, ttl);
  }

  async get(bucket: string): Promise<AttemptWindow | null> {
    const reply = await this.run(READ, bucket, []);
    if (reply === null || reply === undefined) return null;
    const [count, ttl] = triple(reply, 2);
    return windowOf(count, ttl);
  }

  async reserve(bucket: string, max: number, windowMs: number): Promise<SharedReservation> {
    const id = `${this.instance}:${++this.sequence}`;
    const [granted, count, ttl] = triple(await this.run(RESERVE, bucket, [String(max), String(windowMs), id]), 3);
    const settle = async (failed: boolean) => {
      await this.run(SETTLE, bucket, [failed ? '1' : '0', String(windowMs), id]);
    };
    return { granted: Number(granted) === 1, ...windowOf(count, ttl), settle };
  }
}
