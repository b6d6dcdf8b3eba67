import {
  type AttemptResult,
  type ClaimArgs,
  type ClaimedDelivery,
  type CreatedWebhookEndpoint,
  type DeliveryQuery,
  endpointView,
  type FailedAttempt,
  type FailOutcome,
  freezeDelivery,
  isoOrNull,
  leaseToken,
  newWebhookEndpoint,
  type Outbox,
  type OutboxEvent,
  type OutboxEventInput,
  outboxEventOf,
  type StoredWebhookEndpoint,
  validClaimArgs,
  validCreditAccount,
  validDeliveryLimit,
  validEndpointChanges,
  validWebhookId,
  type WebhookDelivery,
  type WebhookEndpoint,
  type WebhookEndpointChanges,
  type WebhookEndpointInput,
  type WebhookEndpoints,
} from 'keygate/store-kit';
import { type SqliteDatabase, type SqliteDriver, sqliteDriver } from './driver.js';
import { guarded, storeError } from './errors.js';
import { migrateKeyStore } from './migrate.js';
import { OUTBOX_SQL } from './sql/outbox.js';
import { validBusyTimeoutMs } from './timeouts.js';

/**
 * Options of {@link SqliteOutbox}.
 *
 * @example
 * const options: SqliteOutboxOptions = { database: new Database('keygate.db') };
 */
export interface SqliteOutboxOptions {
  /** A `better-sqlite3` Database or a `node:sqlite` DatabaseSync (or a `SqliteDriver`). The caller owns it. */
  database: SqliteDatabase;
  /** How long a write waits for the file's write lock, in milliseconds. @default 2000 */
  busyTimeoutMs?: number;
}

interface EndpointRow {
  id: string;
  account_id: string;
  url: string;
  secret: string;
  event_types: string;
  enabled: number;
  created_at: string;
  disabled_at: string | null;
}

interface DeliveryRow {
  id: string;
  event_id: string;
  endpoint_id: string;
  account_id: string;
  event_type: string;
  status: WebhookDelivery['status'];
  attempts: number;
  last_status_code: number | null;
  last_error: string | null;
  last_attempt_at: string | null;
  next_attempt_at: string | null;
  created_at: string;
  delivered_at: string | null;
}

interface EventRow {
  id: string;
  account_id: string;
  type: string;
  at: string;
  data: string;
}

/**
 * The outbox in a SQLite file (`keygate_outbox`, `keygate_webhook_endpoints`,
 * `keygate_webhook_deliveries`), the `outbox` capability of a `SqliteKeyStore` over the same
 * database. An event a `KeyManager` hands with a key write is inserted in that write's transaction,
 * with one delivery row per matching enabled endpoint: a crash loses both or neither. A claim runs in
 * one `BEGIN IMMEDIATE` transaction (one writer at a time on the file), picks the due deliveries and
 * leases them, so dispatchers in any process never claim the same delivery while a lease holds; an
 * outcome is recorded only under the token of the lease that sent it.
 *
 * @example
 * const outbox = new SqliteOutbox({ database });
 * await outbox.migrate();
 * const { endpoint, secret } = await outbox.endpoints.create({ accountId: 'acct_1', url: 'https://example.com/hooks' });
 */
export class SqliteOutbox implements Outbox {
  readonly endpoints: WebhookEndpoints;
  /** Milliseconds a write waits for the write lock. */
  readonly busyTimeoutMs: number;
  private readonly driver: SqliteDriver;

  constructor(options: SqliteOutboxOptions) {
    this.driver = sqliteDriver(options?.database);
    this.busyTimeoutMs = validBusyTimeoutMs(options.busyTimeoutMs, 2_000);
    this.endpoints = new SqliteWebhookEndpoints(this.driver, this.busyTimeoutMs);
  }

  /**
   * Creates or upgrades the tables: the key store's migrations (the outbox's tables are among them).
   * Idempotent.
   *
   * @example
   * await outbox.migrate();
   */
  migrate(): Promise<{ applied: number[] }> {
    return migrateKeyStore(this.driver, this.busyTimeoutMs);
  }

  /**
   * Inserts `events` and their deliveries: to be called inside the caller's write transaction (the
   * key store's). An event id already stored keeps the deliveries it has.
   *
   * @example
   * driver.transaction(() => { writeKey(); outbox.appendIn(events); }, 2_000);
   */
  appendIn(events: readonly OutboxEvent[]): void {
    for (const e of events) {
      const { changes } = this.driver.run(OUTBOX_SQL.appendEvent, [
        e.id,
        e.accountId,
        e.type,
        e.at,
        JSON.stringify(e.data),
      ]);
      if (changes === 0) continue;
      this.driver.run(OUTBOX_SQL.fanOut, [e.id, e.id, e.type, e.at, e.at, e.accountId, e.type]);
    }
  }

  async publish(input: OutboxEventInput): Promise<OutboxEvent> {
    const event = outboxEventOf(input);
    return this.write(() => {
      this.appendIn([event]);
      const row = this.driver.get<EventRow>(OUTBOX_SQL.event, [event.id]);
      return row ? eventOf(row) : event;
    });
  }

  async claim(args: ClaimArgs): Promise<ClaimedDelivery[]> {
    const { nowMs, leaseMs, limit } = validClaimArgs(args);
    const now = new Date(nowMs).toISOString();
    const until = new Date(nowMs + leaseMs).toISOString();
    const token = leaseToken();
    return this.write(() => {
      this.driver.run(OUTBOX_SQL.failOrphans, [now, now]);
      const due = this.driver.all<{ id: string }>(OUTBOX_SQL.due, [now, now, limit]);
      const events = new Map<string, OutboxEvent>();
      const hooks = new Map<string, StoredWebhookEndpoint>();
      return due.map(({ id }) => {
        const row = this.driver.get<DeliveryRow>(OUTBOX_SQL.lease, [token, until, id]) as DeliveryRow;
        let event = events.get(row.event_id);
        if (!event) {
          event = eventOf(this.driver.get<EventRow>(OUTBOX_SQL.event, [row.event_id]) as EventRow);
          events.set(row.event_id, event);
        }
        let hook = hooks.get(row.endpoint_id);
        if (!hook) {
          hook = storedOf(this.driver.get<EndpointRow>(OUTBOX_SQL.endpoint, [row.endpoint_id]) as EndpointRow);
          hooks.set(row.endpoint_id, hook);
        }
        return Object.freeze({
          delivery: deliveryOf(row),
          event,
          endpoint: Object.freeze({ ...endpointView(hook), secret: hook.secret }),
          leaseToken: token,
        });
      });
    });
  }

  async complete(result: AttemptResult): Promise<boolean> {
    const id = validWebhookId('deliveryId', result?.deliveryId);
    const at = new Date(result.nowMs).toISOString();
    return this.write(() => {
      const row = this.driver.get<{ endpoint_id: string }>(OUTBOX_SQL.complete, [
        result.statusCode ?? null,
        at,
        at,
        id,
        String(result.leaseToken),
      ]);
      if (!row) return false;
      this.driver.run(OUTBOX_SQL.healthy, [row.endpoint_id]);
      return true;
    });
  }

  async fail(result: FailedAttempt): Promise<FailOutcome> {
    const id = validWebhookId('deliveryId', result?.deliveryId);
    const at = new Date(result.nowMs).toISOString();
    return this.write((): FailOutcome => {
      const row = this.driver.get<{ endpoint_id: string }>(OUTBOX_SQL.fail, [
        result.retryAtMs === null ? 'failed' : 'pending',
        result.statusCode ?? null,
        result.error ?? null,
        at,
        isoOrNull(result.retryAtMs),
        id,
        String(result.leaseToken),
      ]);
      if (!row) return { recorded: false, endpointDisabled: null };
      // The streak starts at the first failure after a success; the endpoint is disabled once it is old enough.
      const hook = this.driver.get<{ failing_since: string | null; enabled: number; disabled_at: string | null }>(
        OUTBOX_SQL.streak,
        [row.endpoint_id],
      );
      if (!hook) return { recorded: true, endpointDisabled: null };
      const since = hook.failing_since ?? at;
      const disable = hook.enabled === 1 && result.nowMs - Date.parse(since) >= result.disableAfterMs;
      const updated = this.driver.get<EndpointRow>(OUTBOX_SQL.setStreak, [
        since,
        hook.enabled === 1 && !disable ? 1 : 0,
        disable ? at : hook.disabled_at,
        row.endpoint_id,
      ]);
      return { recorded: true, endpointDisabled: disable && updated ? endpointView(storedOf(updated)) : null };
    });
  }

  async deliveries(query: DeliveryQuery): Promise<WebhookDelivery[]> {
    const accountId = validCreditAccount(query?.accountId);
    const limit = validDeliveryLimit(query.limit);
    const byEndpoint = query.endpointId !== undefined;
    const params = byEndpoint ? [accountId, validWebhookId('endpointId', query.endpointId), limit] : [accountId, limit];
    return guarded(() => this.driver.all<DeliveryRow>(OUTBOX_SQL.deliveries(byEndpoint), params).map(deliveryOf));
  }

  private write<T>(work: () => T): Promise<T> {
    try {
      return Promise.resolve(this.driver.transaction(work, this.busyTimeoutMs));
    } catch (err) {
      return Promise.reject(storeError(err));
    }
  }
}

class SqliteWebhookEndpoints implements WebhookEndpoints {
  constructor(
    private readonly driver: SqliteDriver,
    private readonly busyTimeoutMs: number,
  ) {}

  async create(input: WebhookEndpointInput): Promise<CreatedWebhookEndpoint> {
    const e = newWebhookEndpoint(input, Date.now());
    await this.write(() =>
      this.driver.run(OUTBOX_SQL.createEndpoint, [
        e.id,
        e.accountId,
        e.url,
        e.secret,
        JSON.stringify(e.eventTypes),
        e.enabled,
        e.createdAt,
        e.disabledAt,
      ]),
    );
    return { endpoint: endpointView(e), secret: e.secret };
  }

  async list(accountId: string): Promise<WebhookEndpoint[]> {
    const account = validCreditAccount(accountId);
    return guarded(() =>
      this.driver.all<EndpointRow>(OUTBOX_SQL.endpoints, [account]).map((r) => endpointView(storedOf(r))),
    );
  }

  async get(accountId: string, id: string): Promise<WebhookEndpoint | null> {
    const args = [validCreditAccount(accountId), validWebhookId('id', id)];
    return guarded(() => {
      const row = this.driver.get<EndpointRow>(OUTBOX_SQL.endpointOf, args);
      return row ? endpointView(storedOf(row)) : null;
    });
  }

  async update(accountId: string, id: string, changes: WebhookEndpointChanges): Promise<WebhookEndpoint | null> {
    const valid = validEndpointChanges(changes);
    const account = validCreditAccount(accountId);
    const endpointId = validWebhookId('id', id);
    return this.write(() => {
      const row = this.driver.get<EndpointRow & { failing_since: string | null }>(OUTBOX_SQL.endpointOf, [
        account,
        endpointId,
      ]);
      if (!row) return null;
      const wasEnabled = row.enabled === 1;
      const enabled = valid.enabled ?? wasEnabled;
      const disabledAt =
        valid.enabled === true
          ? null
          : valid.enabled === false && wasEnabled
            ? new Date().toISOString()
            : row.disabled_at;
      const failingSince = valid.enabled === true && !wasEnabled ? null : row.failing_since;
      const updated = this.driver.get<EndpointRow>(OUTBOX_SQL.updateEndpoint, [
        valid.url ?? row.url,
        valid.eventTypes ? JSON.stringify(valid.eventTypes) : row.event_types,
        enabled,
        disabledAt,
        failingSince,
        account,
        endpointId,
      ]);
      return updated ? endpointView(storedOf(updated)) : null;
    });
  }

  async remove(accountId: string, id: string): Promise<boolean> {
    const account = validCreditAccount(accountId);
    const endpointId = validWebhookId('id', id);
    return this.write(() => {
      const { changes } = this.driver.run(OUTBOX_SQL.removeEndpoint, [account, endpointId]);
      if (changes === 0) return false;
      this.driver.run(OUTBOX_SQL.orphanDeliveries, [endpointId]);
      return true;
    });
  }

  private write<T>(work: () => T): Promise<T> {
    try {
      return Promise.resolve(this.driver.transaction(work, this.busyTimeoutMs));
    } catch (err) {
      return Promise.reject(storeError(err));
    }
  }
}

const iso = (value: string) => new Date(value).toISOString();
const isoNull = (value: string | null) => (value === null ? null : iso(value));

function storedOf(row: EndpointRow): StoredWebhookEndpoint {
  return {
    id: row.id,
    accountId: row.account_id,
    url: row.url,
    secret: row.secret,
    eventTypes: JSON.parse(row.event_types) as string[],
    enabled: row.enabled === 1,
    createdAt: iso(row.created_at),
    disabledAt: isoNull(row.disabled_at),
  };
}

function eventOf(row: EventRow): OutboxEvent {
  return Object.freeze({
    id: row.id,
    type: row.type,
    accountId: row.account_id,
    at: iso(row.at),
    data: Object.freeze(JSON.parse(row.data) as Record<string, unknown>),
  });
}

function deliveryOf(row: DeliveryRow): WebhookDelivery {
  return freezeDelivery({
    id: row.id,
    eventId: row.event_id,
    endpointId: row.endpoint_id,
    accountId: row.account_id,
    eventType: row.event_type,
    status: row.status,
    attempts: Number(row.attempts),
    lastStatusCode: row.last_status_code === null ? null : Number(row.last_status_code),
    lastError: row.last_error,
    lastAttemptAt: isoNull(row.last_attempt_at),
    nextAttemptAt: isoNull(row.next_attempt_at),
    createdAt: iso(row.created_at),
    deliveredAt: isoNull(row.delivered_at),
  });
}
