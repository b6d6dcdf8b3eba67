import { toPublicKey } from '../auth/compiled-key.js';
import {
  InvalidInputError,
  KeyConflictError,
  KeyInUseError,
  KeyNotFoundError,
  KeyRevokedError,
  quote,
} from '../errors.js';
import { type EventHook, emitSafely, type KeygateEventType } from '../events.js';
import { randomBase62 } from '../key/base62.js';
import { assertPrefix, DEFAULT_PREFIX, generateKey, keyHint } from '../key/format.js';
import { hashKey } from '../key/hash.js';
import type { ApiKeyRecord, KeyMetadata, KeyMode, KeyPatch, PublicKey, RateLimit, WritableKeyStore } from '../types.js';
import type { UsageRecorder } from '../usage/recorder.js';
import { summarizeUsage } from '../usage/report.js';
import { isUsageStore, type UsageReport, type UsageStore, utcDay } from '../usage/types.js';
import {
  validAccountId,
  validAllowList,
  validExpiry,
  validMetadata,
  validMode,
  validName,
  validPermissions,
  validRateLimit,
} from './validate.js';

/** Options of {@link KeyManager}. */
export interface KeyManagerOptions {
  /** Where keys live. Any store with writes: `MemoryKeyStore`, `CachedKeyStore` over one, Postgres, Redis. */
  store: WritableKeyStore;
  /** Prefix of new keys. Default `'mk'`. */
  prefix?: string;
  /** Server-side pepper: digests become HMAC-SHA-256 keyed by it. Must match `authenticate`'s. Default: none. */
  pepper?: string;
  /** Current time in epoch milliseconds. Default `Date.now`. */
  clock?: () => number;
  /** Receives `key.created`, `key.updated`, `key.rotated` and `key.revoked`. Its failures never undo or fail a write. */
  onEvent?: EventHook;
  /** Age in days from which a key's view says `rotationDue: true`. Default `90`. */
  rotationDays?: number;
  /** The process's usage recorder, flushed before usage is read so that this process's latest traffic counts. */
  usage?: UsageRecorder;
}

/** A key as `KeyManager` shows it: the public view plus hygiene signals computed at read time. */
export type ManagedKey = PublicKey & {
  /** Whole days since creation. */
  readonly ageDays: number;
  /** True once the key is `rotationDays` old (default 90) and still active. */
  readonly rotationDue: boolean;
};

/** Where a rotation stands, from the old key's side. See {@link KeyManager.rotationStatus}. */
export interface RotationStatus {
  readonly oldKeyId: string;
  readonly newKeyId: string;
  /** When the successor was created (ISO-8601). */
  readonly rotatedAt: string;
  /** `created` (new key unused), `switched` (new key used, old still busy), `confirmed` (safe to revoke), `revoked`. */
  readonly step: 'created' | 'switched' | 'confirmed' | 'revoked';
  /** The new key has been used since the rotation. */
  readonly newKeyUsed: boolean;
  readonly newKeyLastUsedAt: string | null;
  readonly oldKeyLastUsedAt: string | null;
  /** Milliseconds since the old key was last used (or since the rotation, if it was not used after it). */
  readonly oldKeyQuietForMs: number;
  /** Quiet period required, in milliseconds. */
  readonly quietPeriodMs: number;
  /** The new key has carried traffic and the old key has been quiet for the whole quiet period. */
  readonly safeToRevoke: boolean;
}

/** Input of {@link KeyManager.create}. */
export interface CreateKeyInput {
  accountId: string;
  name: string;
  /** `'live'` (real data, billed) or `'test'` (sandbox, never billed). */
  mode: KeyMode;
  /** Default `[]`. */
  permissions?: readonly string[];
  /** IPv4/IPv6 addresses and CIDR ranges; empty (the default) allows any address. */
  allowedIps?: readonly string[];
  /** When the key stops working: a `Date` or ISO-8601 string. Default: never. */
  expiresAt?: Date | string | null;
  metadata?: KeyMetadata;
  /** The key's own rate limit, e.g. `{ limit: 100, windowMs: 60_000 }`. Default `null`: none of its own. */
  rateLimit?: RateLimit | null;
}

/** Fields {@link KeyManager.update} may change. */
export interface UpdateKeyInput {
  name?: string;
  permissions?: readonly string[];
  allowedIps?: readonly string[];
  expiresAt?: Date | string | null;
  metadata?: KeyMetadata;
  /** `null` removes the key's own rate limit. */
  rateLimit?: RateLimit | null;
}

/** A new key: `secret` is the raw key, returned this once and never stored. */
export interface CreatedKey {
  readonly secret: string;
  readonly key: ManagedKey;
}

const DAY = 86_400_000;
/**
 * Default quiet period of the rotation confirm step, in milliseconds: 15 minutes.
 *
 * @example
 * await keys.revoke(oldId, { ifQuietFor: DEFAULT_QUIET_PERIOD_MS });
 */
export const DEFAULT_QUIET_PERIOD_MS = 15 * 60_000;

const UPDATABLE = new Set(['name', 'permissions', 'allowedIps', 'expiresAt', 'metadata', 'rateLimit']);

/**
 * Creates, reads, changes, rotates and revokes keys. Every input is validated before anything is
 * written; a bad one throws `InvalidInputError` naming the field. Revocation is permanent: a revoked
 * key can be neither changed nor restored.
 *
 * @example
 * const keys = new KeyManager({ store: new MemoryKeyStore() });
 * const { secret, key } = await keys.create({ accountId: 'acct_1', name: 'ci', mode: 'test', permissions: ['email:verify'] });
 * await keys.revoke(key.id);
 */
export class KeyManager {
  readonly store: WritableKeyStore;
  private readonly prefix: string;
  private readonly pepper: string | undefined;
  private readonly clock: () => number;
  private readonly onEvent: EventHook | undefined;
  private readonly rotationDays: number;
  private readonly usageRecorder: UsageRecorder | undefined;

  constructor(options: KeyManagerOptions) {
    const store = options?.store as Partial<WritableKeyStore> | undefined;
    if (!store || typeof store.insert !== 'function' || typeof store.update !== 'function') {
      throw new InvalidInputError(
        'store',
        'store must be a key store that supports writes (insert, update, findById, listByAccount)',
      );
    }
    this.store = options.store;
    this.prefix = options.prefix ?? DEFAULT_PREFIX;
    assertPrefix(this.prefix);
    if (options.pepper !== undefined && (typeof options.pepper !== 'string' || options.pepper === '')) {
      throw new InvalidInputError('pepper', 'pepper must be a non-empty string');
    }
    this.pepper = options.pepper;
    this.clock = options.clock ?? Date.now;
    this.onEvent = options.onEvent;
    this.rotationDays = options.rotationDays ?? 90;
    if (!(this.rotationDays > 0))
      throw new InvalidInputError('rotationDays', 'rotationDays must be a number of days > 0');
    this.usageRecorder = options.usage;
  }

  private view(record: ApiKeyRecord): ManagedKey {
    const ageDays = Math.max(0, Math.floor((this.clock() - Date.parse(record.createdAt)) / DAY));
    return Object.freeze({
      ...toPublicKey(record),
      ageDays,
      rotationDue: record.status === 'active' && ageDays >= this.rotationDays,
    });
  }

  private emit(type: KeygateEventType, record: ApiKeyRecord, extra: { newKeyId?: string } = {}): void {
    emitSafely(this.onEvent, {
      type,
      keyId: record.id,
      accountId: record.accountId,
      hint: record.hint,
      at: this.nowIso(),
      ...extra,
    });
  }

  private usageStore(): UsageStore {
    if (!isUsageStore(this.store)) throw new InvalidInputError('store', 'this store does not keep usage statistics');
    return this.store;
  }

  private nowIso(): string {
    return new Date(this.clock()).toISOString();
  }

  /**
   * Creates a key. The returned `secret` is the only copy of the raw key.
   *
   * @example
   * const { secret, key } = await keys.create({ accountId: 'acct_1', name: 'prod', mode: 'live', allowedIps: ['203.0.113.0/24'] });
   */
  async create(input: CreateKeyInput): Promise<CreatedKey> {
    if (input === null || typeof input !== 'object') throw new InvalidInputError('input', 'create takes an object');
    const accountId = validAccountId(input.accountId);
    const name = validName(input.name);
    const mode = validMode(input.mode);
    const permissions = validPermissions(input.permissions ?? []);
    const allowedIps = validAllowList(input.allowedIps ?? []);
    const expiresAt = validExpiry(input.expiresAt, this.clock());
    const metadata = validMetadata(input.metadata);
    const rateLimit = validRateLimit(input.rateLimit);
    const created = await this.insertNew({
      accountId,
      name,
      mode,
      permissions,
      allowedIps,
      expiresAt,
      metadata,
      rateLimit,
      rotatedFrom: null,
    });
    this.emit('key.created', created.record);
    return { secret: created.secret, key: created.key };
  }

  private async insertNew(
    fields: Pick<
      ApiKeyRecord,
      | 'accountId'
      | 'name'
      | 'mode'
      | 'permissions'
      | 'allowedIps'
      | 'expiresAt'
      | 'metadata'
      | 'rateLimit'
      | 'rotatedFrom'
    >,
  ): Promise<CreatedKey & { record: ApiKeyRecord }> {
    const secret = generateKey({ prefix: this.prefix, mode: fields.mode });
    const now = this.nowIso();
    const record: ApiKeyRecord = {
      id: `key_${randomBase62(20)}`,
      hash: await hashKey(secret, this.pepper),
      ...fields,
      status: 'active',
      hint: keyHint(secret),
      createdAt: now,
      updatedAt: now,
      revokedAt: null,
      rotatedTo: null,
      version: 1,
    };
    const stored = await this.store.insert(record);
    return { secret, key: this.view(stored), record: stored };
  }

  /** The key's public view, or `null` when there is no key with that id. */
  async get(id: string): Promise<ManagedKey | null> {
    if (typeof id !== 'string' || id === '') throw new InvalidInputError('id', 'id must be a non-empty string');
    const record = await this.store.findById(id);
    return record ? this.view(record) : null;
  }

  private async require(id: string): Promise<ApiKeyRecord> {
    if (typeof id !== 'string' || id === '') throw new InvalidInputError('id', 'id must be a non-empty string');
    const record = await this.store.findById(id);
    if (!record) throw new KeyNotFoundError(id);
    return record;
  }

  /**
   * Every key of an account, revoked ones included, oldest first. With `unusedFor` (days), only the
   * active keys with no traffic for that long (never-used keys count from their creation): the ones
   * to revoke.
   *
   * @example
   * const stale = await keys.list('acct_1', { unusedFor: 30 });
   */
  async list(accountId: string, options: { unusedFor?: number } = {}): Promise<ManagedKey[]> {
    const records = await this.store.listByAccount(validAccountId(accountId));
    const sorted = records
      .slice()
      .sort((a, b) => (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : a.id < b.id ? -1 : 1));
    if (options.unusedFor === undefined) return sorted.map((r) => this.view(r));
    if (typeof options.unusedFor !== 'number' || !(options.unusedFor >= 0)) {
      throw new InvalidInputError('unusedFor', 'unusedFor must be a number of days >= 0');
    }
    const usage = this.usageStore();
    await this.usageRecorder?.flush();
    const cutoff = this.clock() - options.unusedFor * DAY;
    const out: ManagedKey[] = [];
    for (const r of sorted) {
      if (r.status !== 'active') continue;
      const activity = await usage.getActivity(r.id);
      const last = activity ? Date.parse(activity.lastUsedAt) : Date.parse(r.createdAt);
      if (last <= cutoff) out.push(this.view(r));
    }
    return out;
  }

  /**
   * Requests of a key per UTC day and outcome over `from`..`to` (inclusive; default the last 30 days),
   * with its last use. Revoked and rotated keys keep their history.
   *
   * @example
   * const report = await keys.usage(key.id, { from: '2026-11-01', to: '2026-11-30' });
   * report.allowed; report.deniedBy.ip_not_allowed;
   */
  async usage(id: string, range: { from?: string | Date; to?: string | Date } = {}): Promise<UsageReport> {
    const record = await this.require(id);
    const usage = this.usageStore();
    const to = dayOf('to', range.to ?? new Date(this.clock()));
    const from = dayOf('from', range.from ?? new Date(Date.parse(`${to}T00:00:00Z`) - 29 * DAY));
    if (from > to) throw new InvalidInputError('from', `from (${from}) is after to (${to})`);
    await this.usageRecorder?.flush();
    const [counts, activity] = await Promise.all([usage.getUsage(record.id, from, to), usage.getActivity(record.id)]);
    return summarizeUsage(record.id, from, to, counts, activity);
  }

  /**
   * The confirm step of a rotation: has the new key been used since the rotation, and how long has
   * the old one been quiet? `safeToRevoke` when both hold for `quietFor` (default 15 minutes).
   *
   * @example
   * const status = await keys.rotationStatus(old.id);
   * if (status.safeToRevoke) await keys.revoke(old.id);
   */
  async rotationStatus(oldId: string, options: { quietFor?: number } = {}): Promise<RotationStatus> {
    const quietPeriodMs = options.quietFor ?? DEFAULT_QUIET_PERIOD_MS;
    if (typeof quietPeriodMs !== 'number' || !(quietPeriodMs >= 0)) {
      throw new InvalidInputError('quietFor', 'quietFor must be a number of milliseconds >= 0');
    }
    const old = await this.require(oldId);
    if (!old.rotatedTo) throw new InvalidInputError('id', `key ${quote(oldId)} has not been rotated; rotate it first`);
    const next = await this.require(old.rotatedTo);
    const usage = this.usageStore();
    await this.usageRecorder?.flush();
    const [oldActivity, newActivity] = await Promise.all([usage.getActivity(old.id), usage.getActivity(next.id)]);
    const rotatedAt = next.createdAt;
    const rotatedMs = Date.parse(rotatedAt);
    const newKeyUsed = !!newActivity && Date.parse(newActivity.lastUsedAt) >= rotatedMs;
    const oldLast = oldActivity ? Date.parse(oldActivity.lastUsedAt) : 0;
    const oldKeyQuietForMs = Math.max(0, this.clock() - Math.max(oldLast, rotatedMs));
    const safeToRevoke = newKeyUsed && oldKeyQuietForMs >= quietPeriodMs;
    const step =
      old.status === 'revoked' ? 'revoked' : safeToRevoke ? 'confirmed' : newKeyUsed ? 'switched' : 'created';
    return {
      oldKeyId: old.id,
      newKeyId: next.id,
      rotatedAt,
      step,
      newKeyUsed,
      newKeyLastUsedAt: newActivity?.lastUsedAt ?? null,
      oldKeyLastUsedAt: oldActivity?.lastUsedAt ?? null,
      oldKeyQuietForMs,
      quietPeriodMs,
      safeToRevoke,
    };
  }

  /**
   * Changes name, permissions, allow list, expiry or metadata. Refused for a revoked key.
   *
   * @example
   * await keys.update(key.id, { allowedIps: [] });
   */
  async update(id: string, changes: UpdateKeyInput): Promise<ManagedKey> {
    if (changes === null || typeof changes !== 'object')
      throw new InvalidInputError('changes', 'update takes an object of changes');
    for (const field of Object.keys(changes)) {
      if (!UPDATABLE.has(field)) {
        throw new InvalidInputError(
          field,
          `${field} cannot be changed; updatable fields are ${[...UPDATABLE].join(', ')}`,
        );
      }
    }
    const patch: KeyPatch = { updatedAt: this.nowIso() };
    if (changes.name !== undefined) patch.name = validName(changes.name);
    if (changes.permissions !== undefined) patch.permissions = validPermissions(changes.permissions);
    if (changes.allowedIps !== undefined) patch.allowedIps = validAllowList(changes.allowedIps);
    if ('expiresAt' in changes) patch.expiresAt = validExpiry(changes.expiresAt, this.clock());
    if (changes.metadata !== undefined) patch.metadata = validMetadata(changes.metadata);
    if (changes.rateLimit !== undefined) patch.rateLimit = validRateLimit(changes.rateLimit);
    if (Object.keys(patch).length === 1)
      throw new InvalidInputError('changes', 'update needs at least one field to change');
    const current = await this.require(id);
    if (current.status === 'revoked') throw new KeyRevokedError(id);
    const updated = await this.store.update(id, patch);
    this.emit('key.updated', updated);
    return this.view(updated);
  }

  /**
   * Step one of a rotation: a new key with the same account, mode, permissions, allow list, expiry
   * and metadata, linked both ways to the old one. Both keys work until the old one is revoked.
   *
   * @example
   * const { secret, key: next } = await keys.rotate(old.id); // deploy secret, confirm, then revoke old.id
   */
  async rotate(id: string): Promise<CreatedKey> {
    const old = await this.require(id);
    if (old.status === 'revoked') throw new KeyRevokedError(id);
    if (old.rotatedTo) {
      const successor = await this.store.findById(old.rotatedTo);
      if (successor && successor.status === 'active') {
        throw new KeyConflictError(
          `key ${quote(id)} was already rotated to ${quote(old.rotatedTo)}; rotate or revoke that key instead`,
        );
      }
    }
    const created = await this.insertNew({
      accountId: old.accountId,
      name: old.name,
      mode: old.mode,
      permissions: old.permissions,
      allowedIps: old.allowedIps,
      expiresAt: old.expiresAt,
      metadata: old.metadata,
      rateLimit: old.rateLimit ?? null,
      rotatedFrom: old.id,
    });
    try {
      await this.store.update(id, { rotatedTo: created.key.id, updatedAt: this.nowIso() });
    } catch (err) {
      // The old key was revoked meanwhile: do not leave an orphan successor working.
      await this.store.update(created.key.id, {
        status: 'revoked',
        revokedAt: this.nowIso(),
        updatedAt: this.nowIso(),
      });
      throw err;
    }
    this.emit('key.rotated', old, { newKeyId: created.key.id });
    return { secret: created.secret, key: created.key };
  }

  /**
   * Revokes a key, permanently: it never authenticates again and no call restores it.
   * Revoking a revoked key throws `KeyRevokedError`. With `ifQuietFor` (milliseconds), the
   * revocation is refused with `KeyInUseError` while the key was used within that period: the last
   * step of a rotation, done only once the old key has gone quiet.
   *
   * @example
   * await keys.revoke(old.id, { ifQuietFor: 15 * 60_000 });
   */
  async revoke(id: string, options: { ifQuietFor?: number } = {}): Promise<ManagedKey> {
    const current = await this.require(id);
    if (current.status === 'revoked') throw new KeyRevokedError(id);
    if (options.ifQuietFor !== undefined) {
      if (typeof options.ifQuietFor !== 'number' || !(options.ifQuietFor >= 0)) {
        throw new InvalidInputError('ifQuietFor', 'ifQuietFor must be a number of milliseconds >= 0');
      }
      await this.usageRecorder?.flush();
      const activity = await this.usageStore().getActivity(id);
      if (activity && this.clock() - Date.parse(activity.lastUsedAt) < options.ifQuietFor) {
        throw new KeyInUseError(id, activity.lastUsedAt);
      }
    }
    const now = this.nowIso();
    const revoked = await this.store.update(id, { status: 'revoked', revokedAt: now, updatedAt: now });
    this.emit('key.revoked', revoked);
    return this.view(revoked);
  }
}

const DAY_TEXT = /^\d{4}-\d{2}-\d{2}$/;

function dayOf(field: string, value: string | Date): string {
  if (value instanceof Date && !Number.isNaN(value.getTime())) return utcDay(value.getTime());
  if (typeof value === 'string' && DAY_TEXT.test(value) && !Number.isNaN(Date.parse(`${value}T00:00:00Z`)))
    return value;
  throw new InvalidInputError(field, `${field} must be a UTC day (YYYY-MM-DD) or a Date`);
}
