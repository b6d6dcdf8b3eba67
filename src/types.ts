/** Whether a key touches real, billed data (`live`) or sandbox data that is never billed (`test`). */
export type KeyMode = 'live' | 'test';

/**
 * A key is `active` until it is suspended (`suspended`, refused with 403 `key_suspended` until it is
 * resumed) or revoked; revocation is permanent, from either state.
 */
export type KeyStatus = 'active' | 'suspended' | 'revoked';

/**
 * A per-key rate limit: at most `limit` units (requests, or a route's `cost`) in a window of `windowMs`
 * milliseconds that opens at the key's first request.
 *
 * @example
 * const rateLimit: RateLimit = { limit: 100, windowMs: 60_000 }; // 100 requests a minute
 */
export interface RateLimit {
  /** Units allowed per window: a whole number >= 1. */
  readonly limit: number;
  /** Length of the window in milliseconds: a number > 0, at most 366 days. */
  readonly windowMs: number;
}

/**
 * One of several limits a key (or an account) is held to at once, named for the `RateLimit-Policy`
 * and `RateLimit` header fields: `name` is 1-32 letters, digits, `_`, `-` or `.`, unique among the
 * key's limits.
 *
 * @example
 * const burst: NamedRateLimit = { name: 'burst', limit: 100, windowMs: 1_000 };
 */
export interface NamedRateLimit extends RateLimit {
  /** How the limit is reported in the header fields, e.g. `burst` or `monthly`. */
  readonly name: string;
}

/**
 * A key's own rate limit: one `{ limit, windowMs }` (reported as `"default"`), or up to 10 named
 * limits that all apply, the most restrictive deciding.
 *
 * @example
 * const one: KeyRateLimit = { limit: 100, windowMs: 60_000 };
 * const several: KeyRateLimit = [
 *   { name: 'burst', limit: 100, windowMs: 1_000 },
 *   { name: 'monthly', limit: 1_000_000, windowMs: 30 * 86_400_000 },
 * ];
 */
export type KeyRateLimit = RateLimit | readonly NamedRateLimit[];

/** Free-form JSON metadata a host attaches to a key (owner, ticket, environment, ...). */
export type KeyMetadata = Readonly<Record<string, unknown>>;

/**
 * A key as a store keeps it. It holds the digest of the secret, never the secret itself.
 *
 * Dates are ISO-8601 strings in UTC so that every store (memory, SQL, Redis, JSON) round-trips them
 * byte for byte.
 */
export interface ApiKeyRecord {
  /** Stable identifier, e.g. `key_3xY...`. Safe to log. */
  readonly id: string;
  /** SHA-256 (or HMAC-SHA-256 with a pepper) of the whole key, lower-case hex, 64 characters. */
  readonly hash: string;
  readonly accountId: string;
  readonly name: string;
  readonly mode: KeyMode;
  readonly status: KeyStatus;
  readonly permissions: readonly string[];
  /** IPv4/IPv6 addresses and CIDR ranges in canonical form; empty means any address. */
  readonly allowedIps: readonly string[];
  /** Display hint such as `mk_live_…Xy9Z`: enough to recognise a key, useless to an attacker. */
  readonly hint: string;
  readonly createdAt: string;
  readonly updatedAt: string;
  readonly expiresAt: string | null;
  readonly revokedAt: string | null;
  /** When the key was suspended (ISO-8601), while it is `suspended`; `null` or absent otherwise. */
  readonly suspendedAt?: string | null;
  /** Why the key was suspended, as given to `KeyManager.suspend`, while it is `suspended`; `null` or absent otherwise. */
  readonly suspendedReason?: string | null;
  /** Id of the key this one replaced by rotation. */
  readonly rotatedFrom: string | null;
  /** Id of the key that replaced this one by rotation. */
  readonly rotatedTo: string | null;
  readonly metadata: KeyMetadata;
  /**
   * The key's own rate limit (one, or several named ones); `null` or absent (records written before
   * it existed) = none of its own.
   */
  readonly rateLimit?: KeyRateLimit | null;
  /** Incremented by the store on every write; lets caches drop answers older than a change. */
  readonly version: number;
}

/** What callers may see of a key: the record without its digest. Returned by `authenticate` and `KeyManager`. */
export type PublicKey = Omit<ApiKeyRecord, 'hash'>;

/**
 * The one method authentication needs. Any database can back it.
 *
 * @example
 * const store: KeyStore = { findByHash: (hash) => db.keys.findOne({ hash }) };
 */
export interface KeyStore {
  /** Returns the record whose `hash` equals `hash`, or null/undefined when there is none. Throws when the store fails. */
  findByHash(hash: string): Promise<ApiKeyRecord | null | undefined>;
  /**
   * Optional synchronous fast path: the record or `null` (known absent) when the answer is at hand
   * without I/O, `undefined` when it is not. `CachedKeyStore` implements it.
   */
  peek?(hash: string): ApiKeyRecord | null | undefined;
}

/** A change a store announces to its subscribers (in-process, and across processes where it has a channel). */
export interface KeyChange {
  readonly type: 'created' | 'updated' | 'revoked';
  readonly id: string;
  readonly hash: string;
  readonly accountId: string;
  readonly version: number;
}

/**
 * Announced by a store whose change channel may have missed changes (it reconnected after a drop):
 * whoever keeps copies of records drops all of them. `CachedKeyStore` clears itself.
 *
 * @example
 * capabilityOf(store, 'changes')?.subscribe((change) => { if (change.type === 'resync') myCache.clear(); else myCache.delete(change.hash); });
 */
export interface KeyResync {
  readonly type: 'resync';
}

/**
 * What a store's `changes` capability delivers: a change of one key, or a resync (drop everything).
 *
 * @example
 * capabilityOf(store, 'changes')?.subscribe((event: KeyChangeEvent) => (event.type === 'resync' ? cache.clear() : cache.delete(event.hash)));
 */
export type KeyChangeEvent = KeyChange | KeyResync;

/**
 * A condition on a write: with `ifVersion`, the write happens only if the stored record is still at
 * that `version`, checked and written atomically; otherwise the store throws `KeyConflictError`
 * (with `keyId`) and writes nothing.
 *
 * @example
 * const current = await store.findById(id);
 * await store.update(id, { rotatedTo: nextId, updatedAt }, { ifVersion: current.version });
 */
export interface WriteCondition {
  /** The `version` the record must have. Default: any version. */
  ifVersion?: number;
}

/**
 * Options of a key write: its condition, and what records it: the outbox events and the audit entries.
 * A store that declares the `outbox` capability stores `events` in the same step as the write (one
 * transaction, one script, one batch, one event-loop turn), and a store that declares `auditedWrites`
 * stores `audit` in its audit log in that same step: the write and all of them are kept, or none
 * (a write refused, by a conflict or a revoked key, stores no entry either). A store without the
 * capability ignores them; `KeyManager` passes each only to a store that declares it.
 *
 * @example
 * await store.update(id, patch, {
 *   ifVersion: current.version,
 *   events: [outboxEventOf(event)],
 *   audit: [freezeAuditEntry(auditId(), validAuditEntry({ at, accountId, keyId: id, action: 'key.updated', actor }))],
 * });
 */
export interface WriteOptions extends WriteCondition {
  /** Events made by `outboxEventOf` (validated, scrubbed, with ids). @default [] */
  events?: readonly OutboxEvent[];
  /**
   * Audit entries as `append` would store them: checked and scrubbed by `validAuditEntry`, with an
   * `auditId` each; the store checks them again (`validAuditEntries`) and writes nothing if one is
   * refused. @default []
   */
  audit?: readonly AuditEntry[];
}

/** Fields `KeyManager` may change on a key. `status` moves between `active` and `suspended`, or to `revoked` for good. */
export interface KeyPatch {
  name?: string;
  permissions?: readonly string[];
  allowedIps?: readonly string[];
  metadata?: KeyMetadata;
  /** `null` removes the key's own limit. */
  rateLimit?: KeyRateLimit | null;
  expiresAt?: string | null;
  rotatedTo?: string | null;
  status?: KeyStatus;
  revokedAt?: string;
  /** Set with `status: 'suspended'`; `null` with `status: 'active'` (a resumption). */
  suspendedAt?: string | null;
  suspendedReason?: string | null;
  updatedAt: string;
}

/**
 * A store `KeyManager` can write to. Every write is atomic, and no write changes a revoked key:
 * `update` on a revoked record throws `KeyRevokedError` and writes nothing. A failure of the store's
 * client surfaces as `KeyStoreUnavailableError` with the client's error as `cause`. A store that
 * announces its writes declares the `changes` capability (see `Capabilities` in `keygate/store-kit`).
 */
export interface WritableKeyStore extends KeyStore {
  findById(id: string): Promise<ApiKeyRecord | null | undefined>;
  listByAccount(accountId: string): Promise<ApiKeyRecord[]>;
  /** Inserts a new record (its `version` is 1). Throws when the id or hash already exists. */
  insert(record: ApiKeyRecord, options?: WriteOptions): Promise<ApiKeyRecord>;
  /**
   * Applies `patch` atomically, bumps `version`, returns the new record. Throws `KeyNotFoundError` or
   * `KeyRevokedError`; with `condition.ifVersion`, `KeyConflictError` when the stored version differs.
   */
  update(id: string, patch: KeyPatch, condition?: WriteOptions): Promise<ApiKeyRecord>;
}

/**
 * An event as the outbox keeps it and a webhook carries it (the JSON body of every delivery).
 * `id` (`evt_…`, time-ordered) is the `webhook-id` of every delivery of it, stable across retries, so a
 * receiver de-duplicates on it. `data` holds the event's own fields (`keyId`, `hint`, `newKeyId`,
 * `reason`, `balance`, ...); never a secret, digest or hash.
 *
 * @example
 * { id: 'evt_0m3x9k2a1000018f3k2d9qz1', type: 'key.revoked', accountId: 'acct_1',
 *   at: '2026-11-24T18:00:00.000Z', data: { keyId: 'key_…', hint: 'mk_live_…Xy9Z' } }
 */
export interface OutboxEvent {
  readonly id: string;
  /** Lower-case dotted words: `key.created`, `credits.low`, `webhook.endpoint_disabled`, ... */
  readonly type: string;
  readonly accountId: string;
  /** When it happened, ISO 8601. */
  readonly at: string;
  readonly data: Readonly<Record<string, unknown>>;
}

/**
 * What an audit entry records. `key.*` are the `KeyManager`'s writes, but for `key.leaked`: a report
 * that the key was found in public (GitHub secret scanning, `keygate/leaks`); `credits.topped_up` a top-up of
 * an account's credits; `dashboard.signed_in` a sign-in to the developer dashboard.
 *
 * @example
 * const action: AuditAction = 'key.revoked';
 */
export type AuditAction =
  | 'key.created'
  | 'key.updated'
  | 'key.rotated'
  | 'key.suspended'
  | 'key.resumed'
  | 'key.revoked'
  | 'key.imported'
  | 'key.leaked'
  | 'credits.topped_up'
  | 'dashboard.signed_in';

/**
 * Who did it: through the dashboard (`id` the signed-in account), the CLI (`id` the operating-system
 * user) or the API (an application's own call to `KeyManager`; `id` whatever the host names it by).
 *
 * @example
 * const actor: AuditActor = { type: 'cli', id: 'alice' };
 */
export interface AuditActor {
  readonly type: 'dashboard' | 'cli' | 'api';
  /** 1-200 characters. */
  readonly id?: string;
}

/**
 * What changed, field by field: the value before and after. `key.created` and `key.imported` carry
 * the new key's `name`, `mode` and `permissions` (before `null`); `key.rotated` `rotatedTo`;
 * `key.revoked`, `key.suspended` and `key.resumed` `status`. Never a secret, digest or hash.
 *
 * @example
 * const changes: AuditChanges = { allowedIps: { before: ['203.0.113.0/24'], after: [] } };
 */
export type AuditChanges = Readonly<Record<string, { readonly before: unknown; readonly after: unknown }>>;

/**
 * One line of the audit log. `id` orders the entries by when they were appended (see `auditId`);
 * `at` is when it happened, by the writer's clock, an ISO 8601 string.
 *
 * @example
 * { id: 'aud_0m3x9k2a1000018f3k2d9qz1', at: '2026-11-24T18:00:00.000Z', accountId: 'acct_1',
 *   keyId: 'key_…', action: 'key.updated', actor: { type: 'cli', id: 'alice' },
 *   changes: { name: { before: 'ci', after: 'ci-2' } } }
 */
export interface AuditEntry {
  readonly id: string;
  readonly at: string;
  readonly accountId: string;
  readonly keyId?: string;
  readonly action: AuditAction;
  readonly actor: AuditActor;
  readonly changes?: AuditChanges;
  /** The client address of the request that did it, when known. */
  readonly address?: string;
}
