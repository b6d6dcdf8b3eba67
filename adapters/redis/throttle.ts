import { InvalidInputError } from 'keygate';
import type { AttemptWindow, SharedAttemptCounter } from 'keygate/store-kit';

/** The part of a node-redis client (v4 or v5) the counter uses. */
export interface RedisCommandClient {
  sendCommand(args: string[]): Promise<unknown>;
}

/** Options of {@link RedisAttemptCounter}. */
export interface RedisAttemptCounterOptions {
  /** A connected node-redis client. The caller owns it and closes it. */
  client: RedisCommandClient;
  /** Prefix of every counter key. Default `'keygate:throttle:'`. */
  prefix?: string;
}

// INCR and PEXPIRE in one script, so that a counter can never be left without an expiry (a crash
// between the two commands would otherwise lock a client out for good). A key that somehow has no
// expiry gets one here too.
const INCREMENT = `
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

function windowOf(reply: unknown): AttemptWindow | null {
  if (reply === null || reply === undefined) return null;
  if (!Array.isArray(reply) || reply.length !== 2) throw new Error('unexpected reply from the attempt counter script');
  const count = Number(reply[0]);
  const resetIn = Number(reply[1]);
  if (!Number.isInteger(count) || !Number.isInteger(resetIn))
    throw new Error('unexpected reply from the attempt counter script');
  // A key without expiry (-1) is treated as a full window by the next increment; report it as 1 s.
  return { count, resetIn: resetIn > 0 ? resetIn : 1000 };
}

/**
 * Failed-attempt counts in Redis, shared by every instance that uses the same prefix: pass it as
 * `shared` to `FailedAttemptThrottle`. One key per client bucket, `<prefix><bucket>`, that expires
 * with its window; when Redis is down the throttle decides with each process's own counts.
 *
 * @example
 * const client = await createClient({ url: 'redis://127.0.0.1:6379' }).connect();
 * const throttle = new FailedAttemptThrottle({ max: 10, window: 60_000, shared: new RedisAttemptCounter({ client }) });
 * app.use(apiKeyAuth({ store, throttle }));
 */
export class RedisAttemptCounter implements SharedAttemptCounter {
  readonly prefix: string;
  private readonly client: RedisCommandClient;

  constructor(options: RedisAttemptCounterOptions) {
    if (typeof options?.client?.sendCommand !== 'function') {
      throw new InvalidInputError('client', 'client must be a node-redis client (createClient() from "redis")');
    }
    this.client = options.client;
    this.prefix = options.prefix ?? 'keygate:throttle:';
    if (typeof this.prefix !== 'string') throw new InvalidInputError('prefix', 'prefix must be a string');
  }

  async increment(bucket: string, window: number): Promise<AttemptWindow> {
    const reply = await this.client.sendCommand(['EVAL', INCREMENT, '1', this.prefix + bucket, String(window)]);
    return windowOf(reply) as AttemptWindow;
  }

  async get(bucket: string): Promise<AttemptWindow | null> {
    return windowOf(await this.client.sendCommand(['EVAL', READ, '1', this.prefix + bucket]));
  }
}
