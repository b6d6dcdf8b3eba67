import {
  KeyConflictError,
  KeyNotFoundError,
  KeyRevokedError,
  KeyStoreUnavailableError,
  type TelemetryOptions,
} from 'keygate';
import type {
  ApiKeyRecord,
  AuditEntry,
  Capabilities,
  Capable,
  KeyActivity,
  KeyChangeEvent,
  KeyPatch,
  PruneArgs,
  PruneResult,
  Telemetry,
  UsageBatch,
  UsageCount,
  UsageStore,
  WritableKeyStore,
  WriteOptions,
} from 'keygate/store-kit';
import {
  applyPatch,
  CAPABILITIES,
  ChangeRelay,
  changeOf,
  checkOptionNames,
  createTelemetry,
  freezeRecord,
  mergeUsage,
  observedLookup,
  parseChange,
  pruneCutoffMs,
  quote,
  utcDay,
  validAuditEntries,
  validPruneArgs,
} from 'keygate/store-kit';
import { RedisAuditLog } from './audit-log.js';
import { requireMethods } from './client-shape.js';
import { unavailable } from './errors.js';
import { RedisOutbox } from './outbox.js';

import { storePrefix } from './prefix.js';
import { PRUNE_USAGE } from './retention-scripts.js';
import { ADD_USAGE, FIND_BY_HASH, INSERT, ScriptRunner, UPDATE } from './scripts.js';
import type { RedisCommandClient } from './throttle.js';
import { countsOfHash, type HashReply } from './usage-hash.js';
import { withRecords } from './write-script.js';

/** The connection that receives the change channel: what `client.duplicate()` returns. */
export interface RedisSubscriberLike {
  connect(): Promise<unknown>;
  subscribe(channel: string, listener: (message: string, channel: string) => unknown): Promise<unknown>;
  on(event: 'error', listener: (err: Error) => void): unknown;
  /** Emitted once connected, and again after every reconnection (node-redis resubscribes first). */
  on(event: 'ready', listener: () => void): unknown;
  /** node-redis v5. */
  destroy?(): void;
  /** node-redis v4. */
  disconnect?(): Promise<void>;
}

/**
 * The part of a node-redis client (v4.6 to v6, `createClient()` from `redis`) this store uses, typed
 * structurally so that `redis` stays an optional peer. A node-redis cluster (`createCluster()`) or an
 * ioredis client or cluster fits through `fromNodeRedisCluster` or `fromIoredis`.
 */
export interface RedisClientLike extends RedisCommandClient {
  /** A second connection for the change channel, not yet connected. */
  duplicate(): RedisSubscriberLike;
}

/** Options of {@link RedisKeyStore}. */
export interface RedisKeyStoreOptions {
  /** A connected node-redis client. The caller owns it and closes it. */
  client: RedisClientLike;
  /**
   * Prefix of every key and of the change channel. Default `'keygate:'`, or `'{keygate}:'` on a Redis
   * Cluster, where it must hold a hash tag (all the store's keys share one slot).
   */
  prefix?: string;
  /**
   * Called when the change channel fails (node-redis reconnects it by itself, then every cache is told
   * to resync), with a `KeyStoreUnavailableError` whose `cause` is the client's error. Default: ignore.
   */
  onError?: (err: KeyStoreUnavailableError) => void;
  /**
   * Where to report lookups by digest (`keygate.store.lookups`, `keygate.store.lookup.duration`, a
   * `keygate.store.lookup` span): for a store used without a `CachedKeyStore` (otherwise give telemetry
   * to the cache). @default undefined (none)
   */
  telemetry?: TelemetryOptions;
}

// Every member of {@link RedisKeyStoreOptions}: any other is refused (`unknown_option`).
const OPTION_NAMES = Object.keys({ client: true, prefix: true, onError: true, telemetry: true } satisfies Record<
  keyof RedisKeyStoreOptions,
  true
>);

/** Optimistic writes retry on a concurrent change; each round at least one writer wins. */
const MAX_ATTEMPTS = 100;

/** The most usage hashes (keys) one prune script looks at. */
const PRUNE_BATCH = 100;

/**
 * A key store in Redis: one server, or a Redis Cluster through `fromNodeRedisCluster` or `fromIoredis`,
 * where the prefix is one hash tag (`'{keygate}:'` by default there) so that every script's keys share a slot.
 * A record is JSON under `<prefix>key:<id>`, with an index `<prefix>hash:<digest>` -> id and a set
 * `<prefix>account:<accountId>`. Writes are Lua scripts, so a revoke and a concurrent update never
 * leave a revoked key active. Changes are published on `<prefix>changes`; the first `subscribe`
 * opens a second connection (`client.duplicate()`) for them, and `close()` ends it. Pub/sub keeps no
 * messages for a dropped connection, so after it reconnects subscribers get a resync. A failure of
 * the client throws `KeyStoreUnavailableError` with the client's error as `cause`.
 *
 * @example
 * const client = await createClient({ url: 'redis://127.0.0.1:6379' }).connect();
 * const store = new RedisKeyStore({ client });
 * const keys = new KeyManager({ store });
 * const cached = new CachedKeyStore(store, { ttlMs: 30_000 });
 * // The dashboard reads the same keys through its own store: new RedisDashboardStore({ client }).
 */
export class RedisKeyStore implements WritableKeyStore, UsageStore, Capable {
  /**
   * Its `changes` (every write, announced across processes), `usage`, `audit` and `auditedWrites`:
   * sorted sets under `<prefix>audit:` (see `RedisAuditLog`), where the entry a `KeyManager` hands
   * with a key write is added by the write's own script; and `outbox` (see `RedisOutbox`): the events
   * a `KeyManager` hands with a write, stored by that script too.
   */
  declare readonly [CAPABILITIES]: Capabilities;
  readonly prefix: string;
  readonly channel: string;
  private readonly telemetry: Telemetry | undefined;
  private readonly client: RedisClientLike;
  private readonly onError: (err: KeyStoreUnavailableError) => void;
  private readonly relay = new ChangeRelay();
  private readonly scripts: ScriptRunner;
  private readonly outbox: RedisOutbox;
  private readonly audit: RedisAuditLog;
  private subscriber: RedisSubscriberLike | undefined;
  private closed = false;

  constructor(options: RedisKeyStoreOptions) {
    checkOptionNames(options, OPTION_NAMES, 'RedisKeyStore');
    requireMethods(
      options?.client,
      ['sendCommand', 'duplicate'],
      'client',
      'a node-redis client (createClient() from "redis")',
    );
    const prefix = storePrefix(options.prefix, options.client.cluster);
    this.client = options.client;
    this.scripts = new ScriptRunner((args) => this.client.sendCommand(args));
    this.prefix = prefix;
    this.channel = `${prefix}changes`;
    this.telemetry = createTelemetry(options.telemetry);
    this.onError = options.onError ?? (() => {});
    const redis = {
      command: (args: string[]) => this.command(args),
      run: (s: string, k: string[], a: string[]) => this.run(s, k, a),
    };
    const audit = new RedisAuditLog(redis, prefix);
    this.audit = audit;
    this.outbox = new RedisOutbox(redis, prefix);
    this[CAPABILITIES] = { changes: this, usage: this, audit, auditedWrites: audit, outbox: this.outbox };
  }

  private recordKey(id: string): string {
    return `${this.prefix}key:${id}`;
  }

  findByHash(hash: string): Promise<ApiKeyRecord | null> {
    return observedLookup(this.telemetry, 'redis', async () => {
      const json = await this.run(FIND_BY_HASH, [`${this.prefix}hash:${hash}`], [this.recordKey('')]);
      return typeof json === 'string' ? parse(json) : null;
    });
  }

  async findById(id: string): Promise<ApiKeyRecord | null> {
    const json = await this.command(['GET', this.recordKey(id)]);
    return typeof json === 'string' ? parse(json) : null;
  }

  async listByAccount(accountId: string): Promise<ApiKeyRecord[]> {
    const ids = (await this.command(['SMEMBERS', `${this.prefix}account:${accountId}`])) as string[];
    if (ids.length === 0) return [];
    const values = (await this.command(['MGET', ...ids.map((id) => this.recordKey(id))])) as (string | null)[];
    return values
      .filter((v): v is string => typeof v === 'string')
      .map(parse)
      .sort((a, b) => (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : a.id < b.id ? -1 : 1));
  }

  async insert(record: ApiKeyRecord, options?: WriteOptions): Promise<ApiKeyRecord> {
    const entries = validAuditEntries(options?.audit);
    const stored = freezeRecord({ ...record, version: 1 });
    const change = changeOf('created', stored);
    const outcome = await this.runRecorded(
      INSERT,
      [this.recordKey(stored.id), `${this.prefix}hash:${stored.hash}`, `${this.prefix}account:${stored.accountId}`],
      [JSON.stringify(stored), stored.id, this.channel, JSON.stringify(change)],
      { audit: entries, events: options?.events },
    );
    if (outcome === 'id') {
      throw new KeyConflictError(`a key with id ${quote(record.id)} already exists`, { keyId: record.id });
    }
    if (outcome === 'hash')
      throw new KeyConflictError('a key with the same digest already exists', { keyId: record.id });
    this.relay.emit(change);
    return stored;
  }

  /**
   * Reads the record, applies the patch, and writes it with a compare-and-set on its version (a Lua
   * script). Without `ifVersion`, a concurrent write makes it read and try again; with it, that is a
   * `KeyConflictError`.
   */
  async update(id: string, patch: KeyPatch, condition?: WriteOptions): Promise<ApiKeyRecord> {
    const entries = validAuditEntries(condition?.audit);
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const current = await this.findById(id);
      if (!current) throw new KeyNotFoundError(id);
      // The shared patch semantics (KeyRevokedError, KeyConflictError); the script then writes only if nobody wrote meanwhile.
      const next = applyPatch(current, patch, condition);
      const change = changeOf(next.status === 'revoked' ? 'revoked' : 'updated', next);
      const outcome = await this.runRecorded(
        UPDATE,
        [this.recordKey(id)],
        [String(current.version), JSON.stringify(next), this.channel, JSON.stringify(change)],
        { audit: entries, events: condition?.events },
      );
      if (outcome === 'ok') {
        this.relay.emit(change);
        return next;
      }
      if (outcome === 'missing') throw new KeyNotFoundError(id);
      if (outcome === 'revoked') throw new KeyRevokedError(id);
      if (condition?.ifVersion !== undefined) {
        throw new KeyConflictError(`key ${quote(id)} changed while being updated`, { keyId: id });
      }
    }
    throw new KeyStoreUnavailableError(`key ${quote(id)} changed ${MAX_ATTEMPTS} times while being updated; try again`);
  }

  /**
   * Adds a flush of usage in one script: counts per key in a hash `<prefix>usage:<id>` (field
   * `day|outcome`), last use in `<prefix>activity:<id>`, and each hash's oldest day in the index
   * `<prefix>usage-by-day` that `prune` reads. Atomic, and additive across processes.
   */
  async addUsage(batch: UsageBatch): Promise<void> {
    const { counts, activity } = mergeUsage(batch);
    if (counts.length === 0 && activity.length === 0) return;
    const keys = [
      ...counts.map((c) => `${this.prefix}usage:${c.keyId}`),
      ...activity.map((a) => `${this.prefix}activity:${a.keyId}`),
      this.usageIndex,
    ];
    const args = [String(counts.length), String(activity.length)];
    for (const c of counts) args.push(`${c.day}|${c.outcome}`, String(c.count), c.accountId);
    for (const a of activity) args.push(a.lastUsedAt, a.lastUsedIp ?? '');
    await this.run(ADD_USAGE, keys, args);
  }

  // Usage hashes are `usage:<id>`: `usage-` names none of them.
  private get usageIndex(): string {
    return `${this.prefix}usage-by-day`;
  }

  /**
   * Deletes the counts of the UTC days that ended more than `olderThanMs` ago: the hashes whose
   * oldest day is before the cutoff, found by the index `<prefix>usage-by-day`, 100 per script.
   */
  async prune(args: PruneArgs): Promise<PruneResult> {
    const first = utcDay(pruneCutoffMs(validPruneArgs(args, 'UsageStore.prune').olderThanMs));
    const scriptArgs = [first.replaceAll('-', ''), first, String(PRUNE_BATCH)];
    let deleted = 0;
    for (;;) {
      const [hashes, counts] = (await this.run(PRUNE_USAGE, [this.usageIndex], scriptArgs)) as [number, number];
      deleted += Number(counts);
      if (Number(hashes) < PRUNE_BATCH) return { deleted };
    }
  }

  async getUsage(keyId: string, from: string, to: string): Promise<UsageCount[]> {
    const reply = (await this.command(['HGETALL', `${this.prefix}usage:${keyId}`])) as HashReply;
    return countsOfHash(keyId, reply, from, to);
  }

  async getActivity(keyId: string): Promise<KeyActivity | null> {
    const [at, ip] = (await this.command(['HMGET', `${this.prefix}activity:${keyId}`, 'at', 'ip'])) as [
      string | null,
      string | null,
    ];
    if (!at) return null;
    return { keyId, lastUsedAt: at, lastUsedIp: ip ? ip : null };
  }

  /**
   * Subscribes to changes made by this process and, through Redis pub/sub, by every other process
   * using the same prefix. The first subscription opens the pub/sub connection; once it is subscribed,
   * and again after every reconnection, listeners get `{ type: 'resync' }`.
   */
  subscribe(listener: (change: KeyChangeEvent) => void): () => void {
    const off = this.relay.subscribe(listener);
    if (!this.subscriber && !this.closed) this.startSubscriber();
    return () => {
      off();
      if (this.relay.listeners === 0) this.stopSubscriber();
    };
  }

  /** Ends the pub/sub connection, if one is open. The client passed in stays open: it is the caller's. */
  close(): void {
    this.closed = true;
    this.stopSubscriber();
  }

  private startSubscriber(): void {
    const sub = this.client.duplicate();
    this.subscriber = sub;
    // Without an error listener a dropped connection would crash the process; node-redis reconnects and resubscribes.
    sub.on('error', (err) => this.onError(unavailable(err)));
    sub
      .connect()
      .then(() =>
        sub.subscribe(this.channel, (message) => {
          const change = parseChange(message);
          if (change) this.relay.emit(change);
        }),
      )
      .then(() => this.resyncOnReady(sub))
      .catch((err: unknown) => {
        this.onError(unavailable(err));
        if (this.subscriber === sub) this.stopSubscriber();
      });
  }

  // Messages published while the subscription was not in place are lost: every cache drops what it
  // holds, now (the first subscription) and on every reconnection ('ready' follows the resubscribe).
  private resyncOnReady(sub: RedisSubscriberLike): void {
    const resync = () => {
      if (this.subscriber === sub) this.relay.emit({ type: 'resync' });
    };
    sub.on('ready', resync);
    resync();
  }

  private stopSubscriber(): void {
    const sub = this.subscriber;
    this.subscriber = undefined;
    if (!sub) return;
    if (typeof sub.destroy === 'function') sub.destroy();
    else sub.disconnect?.().catch(() => {});
  }

  /** One command; a client failure becomes `KeyStoreUnavailableError` with the client's error as `cause`. */
  private command(args: string[]): Promise<unknown> {
    return new Promise((resolve) => resolve(this.client.sendCommand(args))).catch((err: unknown) => {
      throw unavailable(err);
    });
  }

  // A write's script, followed in the same script, when it wrote, by its audit entries and its outbox events.
  private runRecorded(
    script: string,
    keys: string[],
    args: string[],
    records: { audit: readonly AuditEntry[]; events: WriteOptions['events'] },
  ): Promise<unknown> {
    const parts = { audit: records.audit.length > 0, events: (records.events?.length ?? 0) > 0 };
    const allKeys = [...keys];
    const allArgs = [...args];
    for (const extra of [
      parts.audit ? this.audit.appendArgs(records.audit) : undefined,
      parts.events ? this.outbox.appendArgs(records.events ?? []) : undefined,
    ]) {
      if (extra) {
        allKeys.push(...extra.keys);
        allArgs.push(...extra.args);
      }
    }
    return this.run(withRecords(script, keys.length, args.length, parts), allKeys, allArgs);
  }

  /** One script by its SHA (see {@link ScriptRunner}); a failure becomes `KeyStoreUnavailableError`. */
  private run(script: string, keys: string[], args: string[]): Promise<unknown> {
    return this.scripts.run(script, keys, args).catch((err: unknown) => {
      throw unavailable(err);
    });
  }
}

function parse(json: string): ApiKeyRecord {
  return freezeRecord(JSON.parse(json) as ApiKeyRecord);
}
