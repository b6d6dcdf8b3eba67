import {
  type ApiKeyRecord,
  checkOptionNames,
  type DailyTotal,
  type DashboardStore,
  dailyTotals,
  freezeRecord,
  type KeyActivity,
  type KeyPage,
  type KeyPageQuery,
  pageOfKeys,
} from 'keygate/store-kit';
import { requireMethods } from './client-shape.js';
import { unavailable } from './errors.js';
import { storePrefix } from './prefix.js';
import type { RedisCommandClient } from './throttle.js';
import { countsOfHash, type HashReply } from './usage-hash.js';

/**
 * Options of {@link RedisDashboardStore}.
 *
 * @example
 * const options: RedisDashboardStoreOptions = { client, prefix: '{keygate}:' };
 */
export interface RedisDashboardStoreOptions {
  /** A connected node-redis client. The caller owns it and closes it. */
  client: RedisCommandClient;
  /**
   * The prefix of the `RedisKeyStore` whose keys the dashboard shows; its tokens go under it too.
   * Default `'keygate:'`, or `'{keygate}:'` on a Redis Cluster (like the key store's).
   */
  prefix?: string;
}

// Every member of {@link RedisDashboardStoreOptions}: any other is refused (`unknown_option`).
const OPTION_NAMES = Object.keys({ client: true, prefix: true } satisfies Record<
  keyof RedisDashboardStoreOptions,
  true
>);

/**
 * The dashboard's store in Redis, beside a `RedisKeyStore` with the same prefix: it reads that
 * store's records (`<prefix>account:<id>`, `<prefix>key:<id>`) and usage (`<prefix>usage:<id>`,
 * `<prefix>activity:<id>`), and records single-use tokens under `<prefix>used-token:<id>` with an
 * expiry, so a sign-in link works once across every process sharing the server. The reads of many
 * keys are sent together (node-redis pipelines the commands of one tick: one round trip). A page
 * of the key list reads the account's records and pages them here. A failure of the client throws
 * `KeyStoreUnavailableError` with the client's error as `cause`.
 *
 * @example
 * const client = await createClient({ url: 'redis://127.0.0.1:6379' }).connect();
 * const ui = dashboard({ manager: new KeyManager({ store: new RedisKeyStore({ client }) }), store: new RedisDashboardStore({ client }), secret });
 */
export class RedisDashboardStore implements DashboardStore {
  readonly prefix: string;
  private readonly client: RedisCommandClient;

  constructor(options: RedisDashboardStoreOptions) {
    checkOptionNames(options, OPTION_NAMES, 'RedisDashboardStore');
    requireMethods(options?.client, ['sendCommand'], 'client', 'a node-redis client (createClient() from "redis")');
    this.client = options.client;
    this.prefix = storePrefix(options.prefix, options.client.cluster);
  }

  async listKeysPage(accountId: string, query: KeyPageQuery): Promise<KeyPage> {
    const ids = (await this.command(['SMEMBERS', `${this.prefix}account:${accountId}`])) as string[];
    if (ids.length === 0) return { records: [], total: 0 };
    const values = (await this.command(['MGET', ...ids.map((id) => `${this.prefix}key:${id}`)])) as (string | null)[];
    const records = values
      .filter((v): v is string => typeof v === 'string')
      .map((json) => freezeRecord(JSON.parse(json) as ApiKeyRecord));
    return pageOfKeys(records, query);
  }

  async getDailyTotalsOfKeys(keyIds: readonly string[], from: string, to: string): Promise<DailyTotal[]> {
    const replies = await Promise.all(keyIds.map((id) => this.command(['HGETALL', `${this.prefix}usage:${id}`])));
    return dailyTotals(replies.flatMap((reply, i) => countsOfHash(keyIds[i] as string, reply as HashReply, from, to)));
  }

  async getActivityOfKeys(keyIds: readonly string[]): Promise<KeyActivity[]> {
    const replies = await Promise.all(
      keyIds.map((id) => this.command(['HMGET', `${this.prefix}activity:${id}`, 'at', 'ip'])),
    );
    return replies.flatMap((reply, i) => {
      const [at, ip] = reply as [string | null, string | null];
      return at ? [{ keyId: keyIds[i] as string, lastUsedAt: at, lastUsedIp: ip ? ip : null }] : [];
    });
  }

  /** `SET NX` with an expiry: of two concurrent calls exactly one gets true, and the record goes once the token could no longer verify. */
  async markTokenUsed(tokenId: string, expiresAt: string): Promise<boolean> {
    const ttlMs = Math.max(1, Date.parse(expiresAt) - Date.now());
    const reply = await this.command(['SET', this.tokenKey(tokenId), '1', 'NX', 'PX', String(ttlMs)]);
    return reply === 'OK';
  }

  async isTokenUsed(tokenId: string): Promise<boolean> {
    return Number(await this.command(['EXISTS', this.tokenKey(tokenId)])) === 1;
  }

  private tokenKey(tokenId: string): string {
    return `${this.prefix}used-token:${tokenId}`;
  }

  /** One command; a client failure becomes `KeyStoreUnavailableError` with the client's error as `cause`. */
  private command(args: string[]): Promise<unknown> {
    return new Promise((resolve) => resolve(this.client.sendCommand(args))).catch((err: unknown) => {
      throw unavailable(err);
    });
  }
}
