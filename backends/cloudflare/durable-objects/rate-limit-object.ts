import type { RateLimit } from 'keygate';
import { RATE_LIMIT_TABLES, SqliteRateLimiter } from 'keygate/sqlite';
import type { TakeRequest } from 'keygate/store-kit';
import { answerCall } from './protocol.js';
import { openTables } from './storage-driver.js';
import type { DurableObjectStateLike } from './workers-types.js';

/**
 * The Durable Object that counts one key's rate limit: a Worker's `DurableObjectRateLimiter` reaches
 * the object named by the key id, so every request of a key, from every colo and isolate, is counted
 * by one object, one request at a time (a `SqliteRateLimiter` over the object's own SQLite storage).
 * Exact by construction. Once the key's window has ended, an alarm deletes what the object stored, so
 * an idle key costs no storage. Export the class from your Worker's entry and declare it in
 * `wrangler.toml` as a SQLite-backed class (`new_sqlite_classes`: the object needs `ctx.storage.sql`):
 *
 * ```
 * [[durable_objects.bindings]]
 * name = "KEYGATE_LIMITS"
 * class_name = "KeygateRateLimitObject"
 *
 * [[migrations]]
 * tag = "keygate-v1"
 * new_sqlite_classes = ["KeygateRateLimitObject", "KeygateCreditObject"]
 * ```
 *
 * @example
 * export { KeygateRateLimitObject } from 'keygate/cloudflare';
 * // in a handler: new DurableObjectRateLimiter({ namespace: env.KEYGATE_LIMITS })
 */
export class KeygateRateLimitObject {
  private readonly ctx: DurableObjectStateLike;
  private limiter: SqliteRateLimiter | undefined;
  // When the alarm that empties the object is set for (epoch ms), as this instance knows it.
  private alarmAtMs = 0;

  constructor(ctx: DurableObjectStateLike, _env?: unknown) {
    this.ctx = ctx;
  }

  /**
   * Answers the client's calls: `POST /consume` with `{ args: [keyId, limit, cost] }`, and the
   * leases capability's `POST /take` (`[keyId, limit, ask]`) and `POST /giveBack`
   * (`[keyId, limit, window, units]`).
   *
   * @example
   * await stub.fetch('https://keygate.do/consume', { method: 'POST', body: JSON.stringify({ args: ['key_1', { limit: 10, windowMs: 1000 }, 1] }) });
   */
  fetch(request: Request): Promise<Response> {
    return answerCall(request, {
      consume: async (keyId: string, limit: RateLimit, cost: number) => {
        const decision = await this.open().consume(keyId, limit, cost);
        await this.emptyAfter(Date.now() + decision.resetMs);
        return decision;
      },
      // The leases capability of `DurableObjectRateLimiter`: the SQLite limiter's, one call at a time.
      take: async (keyId: string, limit: RateLimit, ask: TakeRequest) => {
        const lease = await this.open().take(keyId, limit, ask);
        await this.emptyAfter(lease.window);
        return lease;
      },
      giveBack: async (keyId: string, limit: RateLimit, window: number, units: number) => {
        await this.open().giveBack(keyId, limit, window, units);
        return null;
      },
    });
  }

  /** Sets the alarm that empties the object for `windowEndMs` unless it is set later already. */
  private async emptyAfter(windowEndMs: number): Promise<void> {
    if (windowEndMs <= this.alarmAtMs) return;
    this.alarmAtMs = windowEndMs;
    await this.ctx.storage.setAlarm(windowEndMs);
  }

  /**
   * Runs when the key's window has ended: deletes the ended window, and everything the object stored
   * when nothing else is left.
   *
   * @example
   * // called by the runtime, at the time set by the last consume
   */
  async alarm(): Promise<void> {
    // Synchronous up to deleteAll: no request of the key runs in between.
    this.open();
    const sql = this.ctx.storage.sql;
    sql?.exec('DELETE FROM keygate_rate_limits WHERE window_end <= ?', Date.now());
    const left = sql?.exec('SELECT max(window_end) AS end FROM keygate_rate_limits').toArray()[0]?.end;
    if (typeof left === 'number') {
      this.alarmAtMs = left;
      await this.ctx.storage.setAlarm(left);
      return;
    }
    this.limiter = undefined;
    this.alarmAtMs = 0;
    await this.ctx.storage.deleteAll();
  }

  private open(): SqliteRateLimiter {
    this.limiter ??= openTables(this.ctx, RATE_LIMIT_TABLES, (database) => new SqliteRateLimiter({ database }));
    return this.limiter;
  }
}
