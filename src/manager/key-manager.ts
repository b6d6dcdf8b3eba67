import {
  InvalidInputError,
  KeyConflictError,
  KeyInUseError,
  KeyNotFoundError,
  KeyRevokedError,
  UnsupportedError,
} from '#errors';
import { changedFields, createdFields } from '../audit/changes.js';
import { validAuditContext } from '../audit/entry.js';
import { type EventHook, emitSafely, type KeygateEvent, type KeygateEventType } from '../events.js';
import { randomBase62 } from '../key/base62.js';
import { toPublicKey } from '../key/compiled-key.js';
import { assertPrefix, DEFAULT_PREFIX, generateKey, isWellFormedKey, keyHint } from '../key/format.js';
import { hashKey } from '../key/hash.js';
import { outboxEventOf } from '../outbox/event.js';
import { quote } from '../redact/describe.js';
import { applyPatch } from '../store/apply-patch.js';
import type {
  ApiKeyRecord,
  KeyMetadata,
  KeyMode,
  KeyPatch,
  KeyRateLimit,
  PublicKey,
  WritableKeyStore,
  WriteOptions,
} from '../types.js';
import type { UsageRecorder } from '../usage/recorder.js';
import { summarizeUsage } from '../usage/report.js';
import { MAX_PERMISSIONS, validAccountId, validDuration, validGraceMs, validReason } from '../validate/fields.js';
import type { InputCheck } from '../validate/issues.js';
import { refusal } from '../validate/issues.js';
import { checkOptionNames } from '../validate/options.js';
import type { AuditAction, AuditChanges, AuditContext, AuditEntry, AuditQuery } from '../vocabulary/audit-log.js';
import { capabilityOf } from '../vocabulary/capabilities.js';
import { type UsageReport, type UsageStore, utcDay } from '../vocabulary/usage-store.js';
import { type AuditedAction, AuditTrail } from './audit-trail.js';
import { type ImportKeyInput, importedKey } from './import-key.js';
import { checkKeyFields, KEY_FIELDS, type KeyCheckOptions, type ValidKeyInput } from './key-input.js';
import { DEFAULT_QUIET_FOR_MS, type RotationStatus, rotationStatusOf } from './rotation-status.js';

export type { InputCheck } from '../validate/issues.js';
export type { ImportFromDigest, ImportFromSecret, ImportKeyFields, ImportKeyInput, KeyDigest } from './import-key.js';
export type { KeyCheckOptions, ValidKeyInput } from './key-input.js';
export { DEFAULT_QUIET_FOR_MS, type RotationStatus } from './rotation-status.js';

/** Options of {@link KeyManager}. */
export interface KeyManagerOptions {
  /** Where keys live. Any store with writes: `MemoryKeyStore`, `CachedKeyStore` over one, Postgres, Redis. */
  store: WritableKeyStore;
  /** Prefix of new and imported keys. @default 'mk' */
  prefix?: string;
  /** Server-side pepper: digests become HMAC-SHA-256 keyed by it. Must match `authenticate`'s. @default undefined (plain SHA-256) */
  pepper?: string;
  /** Current time in epoch milliseconds. @default Date.now */
  clock?: () => number;
  /**
   * Receives `key.created`, `key.updated`, `key.rotated`, `key.suspended` (with its `reason`),
   * `key.resumed` and `key.revoked`, each once its key write succeeded (and, over a store that
   * writes audit entries in its writes, with the entry already stored), and `audit.failed` when a
   * key write succeeded but its audit entry could not be made or, appended after the write, could
   * not be written. Its failures never undo or fail a write.
   * @default undefined (an `audit.failed` then goes to `console.error`)
   */
  onEvent?: EventHook;
  /** Age, in days, from which a key's view says `rotationDue: true`. @default 90 */
  rotationDays?: number;
  /** The process's usage recorder, flushed before usage is read so that this process's latest traffic counts. @default undefined */
  usage?: UsageRecorder;
}

/** A key as `KeyManager` shows it: the public view plus hygiene signals computed at read time. */
export type ManagedKey = PublicKey & {
  /** Whole days since creation. */
  readonly ageDays: number;
  /** True once the key is `rotationDays` old (default 90) and still active. */
  readonly rotationDue: boolean;
};

/** Input of {@link KeyManager.create}. */
export interface CreateKeyInput {
  /** 1-200 characters, at least one visible; no control, bidirectional-override or line-separator character. */
  accountId: string;
  /** 1-200 characters, trimmed, at least one visible; no control, bidirectional-override or line-separator character. */
  name: string;
  /** `'live'` (real data, billed) or `'test'` (sandbox, never billed). */
  mode: KeyMode;
  /** At most {@link KeyManager.MAX_PERMISSIONS} (100) names of 1-128 characters of `A-Z a-z 0-9 _ . : * / -`. @default [] */
  permissions?: readonly string[];
  /** IPv4/IPv6 addresses and CIDR ranges; empty allows any address. @default [] */
  allowedIps?: readonly string[];
  /** When the key stops working: a `Date` or ISO-8601 string. @default null (never) */
  expiresAt?: Date | string | null;
  /** @default {} */
  metadata?: KeyMetadata;
  /**
   * The key's own rate limit, e.g. `{ limit: 100, windowMs: 60_000 }`, or up to 10 named limits that
   * all apply (`[{ name: 'burst', limit: 100, windowMs: 1_000 }, { name: 'monthly', ... }]`).
   * Default `null`: none of its own.
   */
  rateLimit?: KeyRateLimit | null;
}

/** Fields {@link KeyManager.update} may change. A field left out or `undefined` is unchanged; `expiresAt: null` clears the expiry. */
export interface UpdateKeyInput {
  name?: string;
  permissions?: readonly string[];
  allowedIps?: readonly string[];
  expiresAt?: Date | string | null;
  metadata?: KeyMetadata;
  /** `null` removes the key's own rate limit; a list replaces all of its named limits. */
  rateLimit?: KeyRateLimit | null;
}

/**
 * Options of {@link KeyManager.suspend}.
 *
 * @example
 * const options: SuspendKeyOptions = { reason: 'invoice 2026-11 unpaid' };
 */
export interface SuspendKeyOptions extends AuditContext {
  /**
   * Why, shown with the key (`suspendedReason`) and carried by the `key.suspended` event: 1-500
   * characters, at least one visible, no control, bidirectional-override or line-separator character.
   * @default undefined (no reason)
   */
  reason?: string;
}

/**
 * Options of {@link KeyManager.rotate}.
 *
 * @example
 * const options: RotateKeyOptions = { graceMs: 3_600_000 }; // the old key works one more hour
 */
export interface RotateKeyOptions extends AuditContext {
  /**
   * How long the old key keeps working, in milliseconds: its `expiresAt` becomes now + `graceMs`
   * (never later than an expiry it already had); `0` ends it at once. A number >= 0, finite.
   * @default undefined (the old key works until it is revoked: confirm from traffic, then revoke)
   */
  graceMs?: number;
}

/** A new key: `secret` is the raw key, returned this once and never stored. */
export interface CreatedKey {
  readonly secret: string;
  readonly key: ManagedKey;
}

/**
 * Options of {@link KeyManager.revoke}: the quiet period, and who revokes (see `AuditContext`).
 *
 * @example
 * await keys.revoke(old.id, { quietForMs: 15 * 60_000, actor: { type: 'cli', id: 'alice' } });
 */
export interface RevokeOptions extends AuditContext {
  /** Required quiet period, in milliseconds. @default undefined (revoke at once) */
  quietForMs?: number;
}

/**
 * An audit entry a host writes through {@link KeyManager.recordAudit}: an action the manager does not
 * make itself (a sign-in to the dashboard, a credit top-up).
 *
 * @example
 * await keys.recordAudit({ accountId: 'acct_1', action: 'credits.topped_up', changes: { balance: { before: 0, after: 500 } } });
 */
export interface AuditRecordInput extends AuditContext {
  accountId: string;
  action: AuditAction;
  keyId?: string;
  changes?: AuditChanges;
}

const DAY = 86_400_000;

// How long a rotation's claim on the old key may wait for its successor before it counts as abandoned.
const ROTATION_CLAIM_MS = 60_000;

const UPDATABLE = new Set(['name', 'permissions', 'allowedIps', 'expiresAt', 'metadata', 'rateLimit']);

const MANAGER_OPTIONS = ['store', 'prefix', 'pepper', 'clock', 'onEvent', 'rotationDays', 'usage'];
const AUDIT_RECORD_FIELDS = ['accountId', 'action', 'keyId', 'changes', 'actor', 'address'];
// What `import` takes beside a key's fields.
const IMPORT_FIELDS = ['secret', 'digest', 'hint'];

/**
 * Creates, reads, changes, rotates, suspends, resumes and revokes keys. Every input is validated before anything is
 * written; a bad one throws `InvalidInputError` naming the field. Revocation is permanent: a revoked
 * key can be neither changed nor restored. Each write carries its event to the store's outbox and its
 * audit entry to the store's audit log, in the same step as the write where the store offers it (see
 * `WriteOptions`, and {@link KeyManager.audit}).
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
  /** Age, in days, from which a key's view says `rotationDue: true` (the `rotationDays` option; default 90). */
  readonly rotationDays: number;
  private readonly usageRecorder: UsageRecorder | undefined;
  private readonly trail: AuditTrail;

  constructor(options: KeyManagerOptions) {
    checkOptionNames(options, MANAGER_OPTIONS, 'KeyManager');
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
    this.trail = new AuditTrail(this.store, this.onEvent, () => this.nowIso());
  }

  // One key write with what records it: its event, which the store's outbox keeps in the same step
  // (when it has one), and its audit entry, made before the write and kept in the same step by a store
  // that writes entries in its writes (else appended after it, see AuditTrail). Once the write
  // succeeded the event is emitted, then an entry the write did not carry is appended.
  private async write<T>(
    event: KeygateEvent,
    done: AuditedAction | undefined,
    write: (options: WriteOptions) => Promise<T>,
  ): Promise<T> {
    const audit = done === undefined ? undefined : this.trail.prepare(done);
    const written = await write(this.carrying(event, audit?.entries));
    emitSafely(this.onEvent, event);
    await audit?.finish();
    return written;
  }

  // A key write that records `done` and emits no event (a rotation's claim, and its release).
  private async audited<T>(done: AuditedAction, write: (options: WriteOptions) => Promise<T>): Promise<T> {
    const audit = this.trail.prepare(done);
    const written = await write(audit.entries ? { audit: audit.entries } : {});
    await audit.finish();
    return written;
  }

  /**
   * The audit log of key management, newest first: an account's entries, or one key's with `keyId`
   * (at most `limit`, 1-1,000, default 50; `before` an entry id continues a listing after it). Every
   * `create`, `update`, `rotate`, `suspend`, `resume`, `revoke` and `import` through a manager over a
   * store that holds an audit log (its `audit` capability: memory, PostgreSQL, PGlite, MySQL, SQLite,
   * D1, Redis) is there, with its actor. These stores write the entry in the key write's own
   * transaction, script or batch (their `auditedWrites` capability), so no key change is stored
   * without its entry, even when the process dies right after the write; over a store that only
   * declares `audit`, the entry is appended just after the write. Throws `UnsupportedError` (field
   * `store`) when the store holds none.
   *
   * @example
   * const page = await keys.audit({ accountId: 'acct_1', limit: 20 });
   * const next = await keys.audit({ accountId: 'acct_1', limit: 20, before: page.at(-1)?.id });
   */
  audit(query: AuditQuery): Promise<AuditEntry[]> {
    return this.trail.list(query);
  }

  /**
   * Writes an audit entry for an action the manager does not make itself (`dashboard.signed_in`,
   * `credits.topped_up`), at the manager's clock, actor `{ type: 'api' }` unless given. Returns the
   * entry, or null when the store holds no audit log. Unlike the manager's own writes, a failure
   * rejects (with `InvalidInputError` for a bad entry): the caller has nothing else to report.
   *
   * @example
   * await keys.recordAudit({ accountId, action: 'dashboard.signed_in', actor: { type: 'dashboard', id: accountId }, address });
   */
  async recordAudit(input: AuditRecordInput): Promise<AuditEntry | null> {
    checkOptionNames(input, AUDIT_RECORD_FIELDS, 'KeyManager.recordAudit', 'input');
    const { actor, address } = validAuditContext({ actor: input?.actor, address: input?.address });
    const log = this.trail.log;
    if (!log) return null;
    return log.append({
      at: this.nowIso(),
      accountId: input.accountId,
      ...(input.keyId !== undefined && { keyId: input.keyId }),
      action: input.action,
      actor,
      ...(input.changes !== undefined && { changes: input.changes }),
      ...(address !== undefined && { address }),
    });
  }

  private view(record: ApiKeyRecord): ManagedKey {
    const ageDays = Math.max(0, Math.floor((this.clock() - Date.parse(record.createdAt)) / DAY));
    return Object.freeze({
      ...toPublicKey(record),
      ageDays,
      rotationDue: record.status === 'active' && ageDays >= this.rotationDays,
    });
  }

  private eventOf(
    type: KeygateEventType,
    record: Pick<ApiKeyRecord, 'id' | 'accountId' | 'hint'>,
    extra: { newKeyId?: string; imported?: true; reason?: string | null } = {},
  ): KeygateEvent {
    return { type, keyId: record.id, accountId: record.accountId, hint: record.hint, at: this.nowIso(), ...extra };
  }

  // One change of a stored key, with its event and the audit entry of `changes` (see write); the new view returned.
  private async change(
    current: ApiKeyRecord,
    patch: KeyPatch,
    action: 'key.updated' | 'key.suspended' | 'key.resumed' | 'key.revoked',
    context: AuditContext,
    changes: AuditChanges,
    extra?: { reason: string | null },
  ): Promise<ManagedKey> {
    const event = this.eventOf(action, current, extra);
    const done: AuditedAction = { action, accountId: current.accountId, key: current, context, changes };
    const written = await this.write(event, done, (options) => this.store.update(current.id, patch, options));
    return this.view(written);
  }

  // The write options that carry `event` to the store's outbox, when it holds one, and `audit` (the
  // entries AuditTrail made for a store that writes them in its writes): the store keeps both in the
  // same step as the write (see WriteOptions).
  private carrying(event: KeygateEvent, audit: readonly AuditEntry[] | undefined): WriteOptions {
    const options: WriteOptions = audit ? { audit } : {};
    if (!capabilityOf(this.store, 'outbox')) return options;
    return { ...options, events: [outboxEventOf(event, this.clock())] };
  }

  private usageStore(): UsageStore {
    const usage = capabilityOf(this.store, 'usage');
    if (!usage) throw new UnsupportedError('store', 'this store does not keep usage statistics (no usage capability)');
    return usage;
  }

  private nowIso(): string {
    return new Date(this.clock()).toISOString();
  }

  /**
   * Checks a new key's fields (or, with `partial`, the fields given, as for an update) the way
   * `create` and `update` do before they write, without throwing and without a store: every bad
   * field and every bad entry of a list is reported, each as an `InputIssue` with a stable `reason`.
   * For a form that shows each problem next to its field.
   *
   * @param options.now the time an expiry must lie after, in epoch milliseconds. @default Date.now()
   * @param options.partial check only the fields present. @default false
   * @example
   * const checked = KeyManager.check({ accountId: 'acct_1', name: 'ci', mode: 'test', allowedIps: ['10/8', '::1'] });
   * if (!checked.ok) checked.issues; // [{ field: 'allowedIps', index: 0, reason: 'unparseable', message: '...' }]
   */
  static check(input: unknown, options?: KeyCheckOptions & { partial?: false }): InputCheck<ValidKeyInput>;
  static check(input: unknown, options: KeyCheckOptions & { partial: true }): InputCheck<Partial<ValidKeyInput>>;
  static check(input: unknown, options: KeyCheckOptions = {}): InputCheck<Partial<ValidKeyInput>> {
    checkOptionNames(options, ['now', 'partial'], 'KeyManager.check');
    return checkKeyFields(input, { now: options.now ?? Date.now(), partial: options.partial });
  }

  /** The most permissions a key holds: 100. Refused beyond it with `invalid_input`, reason `too_many`. */
  static readonly MAX_PERMISSIONS = MAX_PERMISSIONS;

  // The fields create and import share, validated the same way, every issue reported at once.
  private validFields(input: CreateKeyInput | ImportKeyInput, call: 'create' | 'import'): Partial<ValidKeyInput> {
    if (input === null || typeof input !== 'object') throw new InvalidInputError('input', `${call} takes an object`);
    const checked = checkKeyFields(input, {
      now: this.clock(),
      where: `KeyManager.${call}`,
      ...(call === 'import' && { skip: 'mode', extra: IMPORT_FIELDS }),
    });
    if (!checked.ok) throw refusal(checked.issues);
    return checked.value;
  }

  /**
   * Creates a key. The returned `secret` is the only copy of the raw key.
   *
   * @example
   * `options` say who creates it, for the audit log (default actor `{ type: 'api' }`).
   *
   * @example
   * const { secret, key } = await keys.create({ accountId: 'acct_1', name: 'prod', mode: 'live', allowedIps: ['203.0.113.0/24'] });
   */
  async create(input: CreateKeyInput, options?: AuditContext): Promise<CreatedKey> {
    const { mode, ...fields } = this.validFields(input, 'create') as ValidKeyInput;
    const context = validAuditContext(options, [], 'KeyManager.create');
    const created = await this.insertNew(
      { ...fields, mode, rotatedFrom: null },
      (record) => this.eventOf('key.created', record),
      (record) => ({
        action: 'key.created',
        accountId: record.accountId,
        key: record,
        context,
        changes: createdFields(record),
      }),
    );
    return { secret: created.secret, key: created.key };
  }

  /**
   * Brings an existing key into the store, with the same validation and `key.created` event as
   * {@link create} (the event carries `imported: true`). From its raw value (`secret`: checked against
   * this manager's prefix, its mode taken from it, hashed with this manager's pepper, never stored), or,
   * for a migration from a system that kept only digests, from `digest` (its `algorithm` must match
   * this manager's pepper setting) with the key's `hint` and `mode`. A digest already stored is a
   * `KeyConflictError` (with the `keyId` holding it).
   *
   * @example
   * await keys.import({ accountId: 'acct_1', name: 'legacy', secret: process.env.LEGACY_KEY });
   * await keys.import({ accountId: 'acct_1', name: 'migrated', mode: 'live', hint: 'mk_live_…Xy9Z',
   *   digest: { algorithm: 'sha256', hex: row.sha256 } });
   */
  async import(input: ImportKeyInput, options?: AuditContext): Promise<ManagedKey> {
    const fields = this.validFields(input, 'import') as SharedFields;
    const context = validAuditContext(options, [], 'KeyManager.import');
    const key = await importedKey(input, this.prefix, this.pepper);
    const holder = await this.store.findByHash(key.hash);
    if (holder) throw new KeyConflictError('a key with this digest already exists', { keyId: holder.id });
    const event = this.eventOf(
      'key.created',
      { id: `key_${randomBase62(20)}`, accountId: fields.accountId, hint: key.hint },
      {
        imported: true,
      },
    );
    const record = await this.insertRecord(
      { ...fields, mode: key.mode, rotatedFrom: null },
      { hash: key.hash, hint: key.hint, id: event.keyId as string },
      event,
      (inserted) => ({
        action: 'key.imported',
        accountId: inserted.accountId,
        key: inserted,
        context,
        changes: createdFields(inserted),
      }),
    );
    return this.view(record);
  }

  // A new key, inserted with the event `eventFor` makes of it and the audit entry of `auditedFor`, if
  // any (see write; a rotation's successor has none: its entry went with the claim).
  private async insertNew(
    fields: NewKeyFields,
    eventFor: (record: Pick<ApiKeyRecord, 'id' | 'accountId' | 'hint'>) => KeygateEvent,
    auditedFor: ((record: ApiKeyRecord) => AuditedAction) | undefined,
    id = `key_${randomBase62(20)}`,
  ): Promise<CreatedKey> {
    const secret = generateKey({ prefix: this.prefix, mode: fields.mode });
    const hint = keyHint(secret);
    const event = eventFor({ id, accountId: fields.accountId, hint });
    const digest = { hash: await hashKey(secret, this.pepper), hint, id };
    const stored = await this.insertRecord(fields, digest, event, auditedFor);
    return { secret, key: this.view(stored) };
  }

  // The record is built first, so that its audit entry (`changes` from its fields) goes with its insert.
  private insertRecord(
    fields: NewKeyFields,
    { hash, hint, id }: { hash: string; hint: string; id: string },
    event: KeygateEvent,
    auditedFor: ((record: ApiKeyRecord) => AuditedAction) | undefined,
  ): Promise<ApiKeyRecord> {
    const now = this.nowIso();
    const record: ApiKeyRecord = {
      id,
      hash,
      ...fields,
      status: 'active',
      hint,
      createdAt: now,
      updatedAt: now,
      revokedAt: null,
      rotatedTo: null,
      version: 1,
    };
    return this.write(event, auditedFor?.(record), (options) => this.store.insert(record, options));
  }

  /** The key's public view, or `null` when there is no key with that id. */
  async get(id: string): Promise<ManagedKey | null> {
    if (typeof id !== 'string' || id === '') throw new InvalidInputError('id', 'id must be a non-empty string');
    const record = await this.store.findById(id);
    return record ? this.view(record) : null;
  }

  /**
   * The key a raw secret belongs to, or `null`: for a report of a leaked key (`keygate/leaks`), or a
   * support tool. A value that is not a well-formed key of this manager's prefix (prefix, mode,
   * length, alphabet, checksum: checked offline) is answered `null` without a store lookup; a
   * well-formed one is digested with this manager's pepper and looked up by digest. Never throws for a
   * value; rejects only when the store does. Returns the public view, never the secret or its digest.
   *
   * @example
   * const owner = await keys.findBySecret(reported); // ManagedKey | null
   * if (owner?.status === 'active') await keys.suspend(owner.id, { reason: 'leaked' });
   */
  async findBySecret(secret: unknown): Promise<ManagedKey | null> {
    if (!isWellFormedKey(secret, this.prefix)) return null;
    const record = await this.store.findByHash(await hashKey(secret, this.pepper));
    return record ? this.view(record) : null;
  }

  private async require(id: string): Promise<ApiKeyRecord> {
    if (typeof id !== 'string' || id === '') throw new InvalidInputError('id', 'id must be a non-empty string');
    const record = await this.store.findById(id);
    if (!record) throw new KeyNotFoundError(id);
    return record;
  }

  /**
   * Every key of an account, revoked ones included, oldest first. With `unusedForMs`, only the active
   * keys with no traffic for that many milliseconds (never-used keys count from their creation): the
   * ones to revoke.
   *
   * @param options.unusedForMs milliseconds without traffic. @default undefined (every key)
   * @example
   * const stale = await keys.list('acct_1', { unusedForMs: 30 * 86_400_000 }); // 30 days
   */
  async list(accountId: string, options: { unusedForMs?: number } = {}): Promise<ManagedKey[]> {
    checkOptionNames(options, ['unusedForMs'], 'KeyManager.list');
    const unusedForMs =
      options.unusedForMs === undefined ? undefined : validDuration('unusedForMs', options.unusedForMs);
    const records = (await this.store.listByAccount(validAccountId(accountId))).slice().sort(byCreation);
    if (unusedForMs === undefined) return records.map((r) => this.view(r));
    const usage = this.usageStore();
    await this.usageRecorder?.flush();
    const cutoff = this.clock() - unusedForMs;
    const out: ManagedKey[] = [];
    for (const r of records) {
      if (r.status !== 'active') continue;
      const activity = await usage.getActivity(r.id);
      const last = activity ? Date.parse(activity.lastUsedAt) : Date.parse(r.createdAt);
      if (last <= cutoff) out.push(this.view(r));
    }
    return out;
  }

  /**
   * Requests of a key per UTC day and outcome over `from`..`to` (inclusive; default the last 30 days),
   * with its last use. Revoked and rotated keys keep their history. Throws `UnsupportedError`
   * (field `store`) when the store keeps no usage statistics.
   *
   * @example
   * const report = await keys.usage(key.id, { from: '2026-11-01', to: '2026-11-30' });
   * report.allowed; report.deniedBy.ip_not_allowed;
   */
  async usage(id: string, range: { from?: string | Date; to?: string | Date } = {}): Promise<UsageReport> {
    checkOptionNames(range, ['from', 'to'], 'KeyManager.usage', 'range');
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
   * The confirm step of a rotation: has the new key been used since the rotation, and has the old one
   * been quiet for `quietForMs`? `safeToRevoke` when both hold.
   *
   * @param options.quietForMs the quiet period, in milliseconds. @default DEFAULT_QUIET_FOR_MS (15 minutes)
   * @example
   * const status = await keys.rotationStatus(old.id, { quietForMs: 30 * 60_000 });
   * if (status.safeToRevoke) await keys.revoke(old.id);
   */
  async rotationStatus(oldId: string, options: { quietForMs?: number } = {}): Promise<RotationStatus> {
    checkOptionNames(options, ['quietForMs'], 'KeyManager.rotationStatus');
    const quietForMs = validDuration('quietForMs', options.quietForMs ?? DEFAULT_QUIET_FOR_MS);
    const old = await this.require(oldId);
    if (!old.rotatedTo) throw new InvalidInputError('id', `key ${quote(oldId)} has not been rotated; rotate it first`);
    const next = await this.require(old.rotatedTo);
    const usage = this.usageStore();
    await this.usageRecorder?.flush();
    const [oldActivity, newActivity] = await Promise.all([usage.getActivity(old.id), usage.getActivity(next.id)]);
    return rotationStatusOf({ old, next, oldActivity, newActivity, now: this.clock(), quietForMs });
  }

  // The store patch for `changes`: a field left out or undefined stays as it is; only null clears.
  private patchOf(changes: UpdateKeyInput): KeyPatch {
    if (changes === null || typeof changes !== 'object')
      throw new InvalidInputError('changes', 'update takes an object of changes', { reason: 'wrong_type' });
    // A key's field that cannot change (`accountId`, `mode`) is not_allowed; a member that is no key
    // field at all (a misspelt `allowIps`) is refused by checkKeyFields as an unknown option.
    for (const [field, value] of Object.entries(changes)) {
      if (value !== undefined && !UPDATABLE.has(field) && KEY_FIELDS.includes(field as keyof ValidKeyInput)) {
        throw new InvalidInputError(
          field,
          `${field} cannot be changed; updatable fields are ${[...UPDATABLE].join(', ')}`,
          { reason: 'not_allowed' },
        );
      }
    }
    const checked = checkKeyFields(changes, { now: this.clock(), partial: true, where: 'KeyManager.update' });
    if (!checked.ok) throw refusal(checked.issues);
    if (Object.keys(checked.value).length === 0) {
      throw new InvalidInputError('changes', 'update needs at least one field to change', { reason: 'empty' });
    }
    return { ...checked.value, updatedAt: this.nowIso() };
  }

  /**
   * Changes name, permissions, allow list, expiry or metadata. Refused for a revoked key. A field left
   * out or `undefined` is unchanged; `expiresAt: null` removes the expiry.
   *
   * @example
   * await keys.update(key.id, { allowedIps: [] });
   */
  async update(id: string, changes: UpdateKeyInput, options?: AuditContext): Promise<ManagedKey> {
    const patch = this.patchOf(changes);
    const context = validAuditContext(options, [], 'KeyManager.update');
    const current = await this.require(id);
    if (current.status === 'revoked') throw new KeyRevokedError(id);
    // What the patch changes of the key as read just before the write: `before` as read, `after` as
    // written. A field a concurrent writer changed in between, and this patch does not set, is not listed.
    return this.change(current, patch, 'key.updated', context, changedFields(current, applyPatch(current, patch)));
  }

  /**
   * Step one of a rotation: a new key with the same account, mode, permissions, allow list, expiry
   * and metadata, linked both ways to the old one. Both keys work until the old one is revoked.
   * A key has at most one active successor: the old key is claimed first by a conditional write (its
   * `rotatedTo` set to the new id, only if nobody wrote to it since it was read), then the new key is
   * inserted. Of concurrent calls one gets the new key and the others `KeyConflictError` (`keyId`).
   *
   * With `graceMs`, the old key's `expiresAt` is set in the same write as the claim: it keeps working
   * for that many milliseconds (never past an expiry it had), and needs no revocation; the new key
   * keeps the old key's original expiry. A suspended key (one suspended as leaked, say) rotates
   * too, without being resumed: the new key is active, with the same fields, and the old one stays
   * suspended (its `rotatedTo` set), so a leaked key is replaced without working again for a moment.
   *
   * @example
   * const { secret, key: next } = await keys.rotate(old.id); // deploy secret, confirm, then revoke old.id
   * await keys.rotate(other.id, { graceMs: 24 * 3_600_000 }); // the old key stops working in 24 hours
   */
  async rotate(id: string, options: RotateKeyOptions = {}): Promise<CreatedKey> {
    const context = validAuditContext(options, ['graceMs'], 'KeyManager.rotate');
    const graceMs = options?.graceMs === undefined ? undefined : validGraceMs(options.graceMs);
    const old = await this.require(id);
    if (old.status === 'revoked') throw new KeyRevokedError(id);
    await this.refuseSecondRotation(old);
    const successorId = `key_${randomBase62(20)}`;
    const claim: KeyPatch = { rotatedTo: successorId, updatedAt: this.nowIso() };
    if (graceMs !== undefined) claim.expiresAt = graceExpiry(this.clock() + graceMs, old.expiresAt);
    // The rotation's entry goes with the claim, the write that changes the old key (its successor's
    // id, and its expiry when there is a grace): no crash can leave that change without its entry. The
    // event goes with the successor's insert: subscribers hear of a rotation once the new key exists.
    const graced = claim.expiresAt !== undefined && claim.expiresAt !== old.expiresAt;
    const changes: AuditChanges = {
      rotatedTo: { before: old.rotatedTo, after: successorId },
      ...(graced && { expiresAt: { before: old.expiresAt, after: claim.expiresAt } }),
    };
    const claimed = await this.audited(
      { action: 'key.rotated', accountId: old.accountId, key: old, context, changes },
      (o) => this.store.update(id, claim, { ...o, ifVersion: old.version }),
    );
    let created: CreatedKey;
    try {
      const { accountId, name, mode, permissions, allowedIps, expiresAt, metadata } = old;
      const rateLimit = old.rateLimit ?? null;
      const fields = {
        accountId,
        name,
        mode,
        permissions,
        allowedIps,
        expiresAt,
        metadata,
        rateLimit,
        rotatedFrom: old.id,
      };
      created = await this.insertNew(
        fields,
        () => this.eventOf('key.rotated', old, { newKeyId: successorId }),
        undefined,
        successorId,
      );
    } catch (err) {
      // Release the claim so that the key can be rotated again, with an entry that says so. Should that
      // fail too, the claim is abandoned, and refuseSecondRotation lets a rotation through once it is
      // ROTATION_CLAIM_MS old.
      const release = { rotatedTo: old.rotatedTo, expiresAt: old.expiresAt, updatedAt: this.nowIso() };
      const undone: AuditChanges = {
        rotatedTo: { before: successorId, after: old.rotatedTo },
        ...(graced && { expiresAt: { before: claimed.expiresAt, after: old.expiresAt } }),
      };
      const action = { action: 'key.updated' as const, accountId: old.accountId, key: old, context, changes: undone };
      await this.audited(action, (o) => this.store.update(id, release, { ...o, ifVersion: claimed.version })).catch(
        () => {},
      );
      throw err;
    }
    return created;
  }

  // Rotated already: the successor is active or suspended, or it is still being inserted (claimed, not
  // yet found, less than ROTATION_CLAIM_MS ago). A revoked successor, or an abandoned claim, allows a new rotation.
  private async refuseSecondRotation(old: ApiKeyRecord): Promise<void> {
    if (!old.rotatedTo) return;
    const successor = await this.store.findById(old.rotatedTo);
    const pending = !successor && this.clock() - Date.parse(old.updatedAt) < ROTATION_CLAIM_MS;
    if (!pending && (!successor || successor.status === 'revoked')) return;
    throw new KeyConflictError(
      `key ${quote(old.id)} was already rotated to ${quote(old.rotatedTo)}; rotate or revoke that key instead`,
      { keyId: old.id },
    );
  }

  /**
   * Suspends a key: it is refused with 403 `key_suspended` (after the expiry check, before the allow
   * list) until {@link resume}, on the next request in this process and, through the store's change
   * channel, in every other. Its view shows `status: 'suspended'`, `suspendedAt` and
   * `suspendedReason`. Suspending a suspended key changes nothing and returns its view (the first
   * suspension's time and reason stay); a revoked key throws `KeyRevokedError`, nothing written.
   *
   * @example
   * await keys.suspend(key.id, { reason: 'invoice 2026-11 unpaid' });
   */
  async suspend(id: string, options: SuspendKeyOptions = {}): Promise<ManagedKey> {
    const context = validAuditContext(options, ['reason'], 'KeyManager.suspend');
    const reason = validReason(options?.reason);
    const current = await this.require(id);
    if (current.status === 'revoked') throw new KeyRevokedError(id);
    if (current.status === 'suspended') return this.view(current);
    const now = this.nowIso();
    const patch: KeyPatch = { status: 'suspended', suspendedAt: now, suspendedReason: reason, updatedAt: now };
    // The store refuses the write if the key was revoked since it was read: revocation stays final.
    const changes: AuditChanges = {
      status: { before: 'active', after: 'suspended' },
      ...(reason === null ? {} : { suspendedReason: { before: null, after: reason } }),
    };
    return this.change(current, patch, 'key.suspended', context, changes, { reason });
  }

  /**
   * Ends a suspension: the key authenticates again, at once in this process and through the change
   * channel in every other. Resuming an active key changes nothing and returns its view; a revoked
   * key throws `KeyRevokedError`, nothing written.
   *
   * @example
   * await keys.resume(key.id);
   */
  async resume(id: string, options?: AuditContext): Promise<ManagedKey> {
    const context = validAuditContext(options, [], 'KeyManager.resume');
    const current = await this.require(id);
    if (current.status === 'revoked') throw new KeyRevokedError(id);
    if (current.status === 'active') return this.view(current);
    const patch: KeyPatch = { status: 'active', suspendedAt: null, suspendedReason: null, updatedAt: this.nowIso() };
    return this.change(current, patch, 'key.resumed', context, { status: { before: 'suspended', after: 'active' } });
  }

  /**
   * Revokes a key, active or suspended, permanently: it never authenticates again and no call restores it.
   * Revoking a revoked key throws `KeyRevokedError`. With `quietForMs`, the revocation is refused with
   * `KeyInUseError` while the key was used within that many milliseconds: the last step of a
   * rotation, done only once the old key has gone quiet.
   *
   * @param options.quietForMs required quiet period, in milliseconds. @default undefined (revoke at once)
   * @example
   * await keys.revoke(old.id, { quietForMs: DEFAULT_QUIET_FOR_MS });
   */
  async revoke(id: string, options: RevokeOptions = {}): Promise<ManagedKey> {
    const context = validAuditContext(options, ['quietForMs'], 'KeyManager.revoke');
    const quietForMs = options.quietForMs === undefined ? undefined : validDuration('quietForMs', options.quietForMs);
    const current = await this.require(id);
    if (current.status === 'revoked') throw new KeyRevokedError(id);
    if (quietForMs !== undefined) await this.assertQuiet(id, quietForMs);
    const now = this.nowIso();
    return this.change(current, { status: 'revoked', revokedAt: now, updatedAt: now }, 'key.revoked', context, {
      status: { before: current.status, after: 'revoked' },
    });
  }

  private async assertQuiet(id: string, quietForMs: number): Promise<void> {
    await this.usageRecorder?.flush();
    const activity = await this.usageStore().getActivity(id);
    if (activity && this.clock() - Date.parse(activity.lastUsedAt) < quietForMs) {
      throw new KeyInUseError(id, activity.lastUsedAt);
    }
  }
}

type SharedFields = Pick<
  ApiKeyRecord,
  'accountId' | 'name' | 'permissions' | 'allowedIps' | 'expiresAt' | 'metadata' | 'rateLimit'
>;
type NewKeyFields = SharedFields & Pick<ApiKeyRecord, 'mode' | 'rotatedFrom'>;

// The grace rotation's end for the old key: `endMs`, or the expiry it had if that comes first.
function graceExpiry(endMs: number, expiresAt: string | null): string {
  const had = expiresAt === null ? Number.POSITIVE_INFINITY : Date.parse(expiresAt);
  return new Date(Math.min(endMs, had)).toISOString();
}

function byCreation(a: ApiKeyRecord, b: ApiKeyRecord): number {
  if (a.createdAt !== b.createdAt) return a.createdAt < b.createdAt ? -1 : 1;
  return a.id < b.id ? -1 : 1;
}

const DAY_TEXT = /^\d{4}-\d{2}-\d{2}$/;

function dayOf(field: string, value: string | Date): string {
  if (value instanceof Date && !Number.isNaN(value.getTime())) return utcDay(value.getTime());
  if (typeof value === 'string' && DAY_TEXT.test(value) && !Number.isNaN(Date.parse(`${value}T00:00:00Z`)))
    return value;
  throw new InvalidInputError(field, `${field} must be a UTC day (YYYY-MM-DD) or a Date`);
}
