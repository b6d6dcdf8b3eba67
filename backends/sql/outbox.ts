import {
  type AttemptResult,
  type ClaimArgs,
  type ClaimedDelivery,
  type CreatedWebhookEndpoint,
  checkOptionNames,
  type DeliveryQuery,
  endpointView,
  type FailedAttempt,
  type FailOutcome,
  freezeDelivery,
  leaseToken,
  newWebhookEndpoint,
  type Outbox,
  type OutboxEvent,
  type OutboxEventInput,
  outboxEventOf,
  type PruneArgs,
  type PruneResult,
  pruneCutoffMs,
  type StoredWebhookEndpoint,
  validClaimArgs,
  validCreditAccount,
  validDeliveryLimit,
  validEndpointChanges,
  validPruneArgs,
  validWebhookId,
  type WebhookDelivery,
  type WebhookEndpoint,
  type WebhookEndpointChanges,
  type WebhookEndpointInput,
  type WebhookEndpointOptions,
  type WebhookEndpoints,
} from 'keygate/store-kit';
import type { SqlEngine } from './engine.js';
import { jsonOf, marks, type TimeCodec } from './key-record.js';
import type { GivenOptions } from './options.js';
import { type SqlTx, type Step, wait } from './step.js';

const ENDPOINT_COLUMNS = 'id, account_id, url, secret, event_types, enabled, created_at, disabled_at';
const DELIVERY_COLUMNS =
  'id, event_id, endpoint_id, account_id, event_type, status, attempts, last_status_code, last_error, last_attempt_at, next_attempt_at, created_at, delivered_at';
const EVENT_COLUMNS = 'id, account_id, type, at, data';

type Time = Date | string;

/** The most events one transaction of a prune looks at (and deletes, with their deliveries). */
const PRUNE_PAGE = 200;

interface EndpointRow {
  id: string;
  account_id: string;
  url: string;
  secret: string;
  event_types: unknown;
  enabled: boolean | number;
  created_at: Time;
  disabled_at: Time | null;
  failing_since?: Time | null;
}

interface DeliveryRow {
  id: string;
  event_id: string;
  endpoint_id: string;
  account_id: string;
  event_type: string;
  status: WebhookDelivery['status'];
  attempts: number | string;
  last_status_code: number | null;
  last_error: string | null;
  last_attempt_at: Time | null;
  next_attempt_at: Time | null;
  created_at: Time;
  delivered_at: Time | null;
}

interface EventRow {
  id: string;
  account_id: string;
  type: string;
  at: Time;
  data: unknown;
}

/**
 * What the outbox needs of an engine beyond its runner, codec and tables (`outbox`,
 * `webhook_endpoints`, `webhook_deliveries`): the row locks it has (or '' where a transaction holds the whole file), and the statements that differ: storing an
 * event once, fanning it out to matching endpoints, and ending deliveries whose endpoint is gone.
 *
 * @example
 * const dialect: OutboxDialect = { ...engine, lockRow: '', lockDue: '', fanOut: ..., ... };
 */
export interface OutboxDialect<X extends SqlTx = SqlTx> extends SqlEngine<X> {
  /** Appended to a SELECT of rows about to change (' FOR UPDATE'), or ''. */
  readonly lockRow: string;
  /** Appended to the SELECT of due deliveries (' FOR UPDATE SKIP LOCKED'), or ''. */
  readonly lockDue: string;
  /** Stores an event (? id, account, type, at, data); true when it is new, false when its id was already stored. */
  insertEvent(tx: X, params: readonly unknown[]): Step<boolean>;
  /**
   * One pending delivery per enabled endpoint of the account that takes the event's type (or '*'):
   * ? event id, event id, event type, at, at, account, event type.
   */
  readonly fanOut: string;
  /** Ends due deliveries whose endpoint is gone or disabled: ? now, now. */
  readonly failOrphans: string;
}

/**
 * The row locks of engines that have them (PostgreSQL, MySQL 8, MariaDB 10.6+): a claim skips the due
 * deliveries another claim holds, and an outcome locks its delivery and endpoint.
 *
 * @example
 * super({ ...engine, ...ROW_LOCKS, insertEvent, fanOut, failOrphans });
 */
export const ROW_LOCKS = { lockRow: ' FOR UPDATE', lockDue: ' FOR UPDATE SKIP LOCKED' } as const;

/**
 * The outbox every SQL engine shares, in the tables `keygate_outbox`, `keygate_webhook_endpoints`
 * and `keygate_webhook_deliveries`. An event a `KeyManager` hands with a key write is inserted in that
 * write's transaction, with one delivery row per matching enabled endpoint: a crash loses both or
 * neither. A claim picks the due deliveries (skipping rows another claim holds) and leases them in
 * one transaction, so dispatchers in any process never claim the same delivery while a lease holds;
 * an outcome is recorded only under the token of the lease that sent it.
 *
 * @example
 * const outbox = new SqlOutbox(dialect);
 * const claimed = await outbox.claim({ nowMs: Date.now(), leaseMs: 30_000, limit: 10 });
 */
export class SqlOutbox<X extends SqlTx = SqlTx> implements Outbox {
  readonly endpoints: WebhookEndpoints;

  /** `given`: the backend class's options, refused when a member is unknown (see `GivenOptions`). */
  constructor(
    private readonly dialect: OutboxDialect<X>,
    given?: GivenOptions,
  ) {
    if (given) checkOptionNames(given.options, given.names, given.where);
    this.endpoints = new SqlWebhookEndpoints(dialect);
  }

  /**
   * Inserts `events` and their deliveries inside the caller's transaction; an id already stored is
   * skipped, and keeps the deliveries it has. For the key stores of the SQL core, not applications.
   *
   * @internal
   * @example
   * yield* outbox.appendIn(tx, options.events);
   */
  *appendIn(tx: X, events: readonly OutboxEvent[]): Step<void> {
    const { time, fanOut } = this.dialect;
    for (const e of events) {
      const at = time.write(e.at);
      const fresh = yield* this.dialect.insertEvent(tx, [e.id, e.accountId, e.type, at, JSON.stringify(e.data)]);
      if (fresh) yield tx.run(fanOut, [e.id, e.id, e.type, at, at, e.accountId, e.type]);
    }
  }

  async publish(input: OutboxEventInput): Promise<OutboxEvent> {
    const event = outboxEventOf(input);
    const { time } = this.dialect;
    const events = this.dialect.table('outbox');
    const outbox = this;
    return this.dialect.runner.transaction(function* (tx) {
      yield* outbox.appendIn(tx, [event]);
      const [row] = yield* wait(tx.all<EventRow>(`SELECT ${EVENT_COLUMNS} FROM ${events} WHERE id = ?`, [event.id]));
      return row ? eventOf(row, time) : event;
    });
  }

  async claim(args: ClaimArgs): Promise<ClaimedDelivery[]> {
    const { nowMs, leaseMs, limit } = validClaimArgs(args);
    const d = this.dialect;
    const now = d.time.write(new Date(nowMs).toISOString());
    const until = d.time.write(new Date(nowMs + leaseMs).toISOString());
    const token = leaseToken();
    return d.runner.transaction(function* (tx) {
      // Deliveries whose endpoint is gone or disabled end here, so that they never block the queue.
      yield tx.run(d.failOrphans, [now, now]);
      const due = yield* wait(
        tx.all<{ id: string }>(
          `SELECT id FROM ${d.table('webhook_deliveries')}
            WHERE status = 'pending' AND next_attempt_at <= ? AND (leased_until IS NULL OR leased_until <= ?)
            ORDER BY next_attempt_at, id LIMIT ?${d.lockDue}`,
          [now, now, limit],
        ),
      );
      if (due.length === 0) return [];
      const ids = due.map((r) => r.id);
      const inIds = `IN (${marks(ids.length)})`;
      yield tx.run(`UPDATE ${d.table('webhook_deliveries')} SET lease_token = ?, leased_until = ? WHERE id ${inIds}`, [
        token,
        until,
        ...ids,
      ]);
      const rows = yield* wait(
        tx.all<DeliveryRow>(
          `SELECT ${DELIVERY_COLUMNS} FROM ${d.table('webhook_deliveries')} WHERE id ${inIds} ORDER BY next_attempt_at, id`,
          ids,
        ),
      );
      const eventIds = [...new Set(rows.map((r) => r.event_id))];
      const hookIds = [...new Set(rows.map((r) => r.endpoint_id))];
      const events = yield* wait(
        tx.all<EventRow>(
          `SELECT ${EVENT_COLUMNS} FROM ${d.table('outbox')} WHERE id IN (${marks(eventIds.length)})`,
          eventIds,
        ),
      );
      const hooks = yield* wait(
        tx.all<EndpointRow>(
          `SELECT ${ENDPOINT_COLUMNS} FROM ${d.table('webhook_endpoints')} WHERE id IN (${marks(hookIds.length)})`,
          hookIds,
        ),
      );
      const eventById = new Map(events.map((e) => [e.id, eventOf(e, d.time)]));
      const hookById = new Map(hooks.map((h) => [h.id, storedOf(h, d.time)]));
      return rows.map((row) => {
        const hook = hookById.get(row.endpoint_id) as StoredWebhookEndpoint;
        return Object.freeze({
          delivery: deliveryOf(row, d.time),
          event: eventById.get(row.event_id) as OutboxEvent,
          endpoint: Object.freeze({ ...endpointView(hook), secret: hook.secret }),
          leaseToken: token,
        });
      });
    });
  }

  async complete(result: AttemptResult): Promise<boolean> {
    const id = validWebhookId('deliveryId', result?.deliveryId);
    const d = this.dialect;
    const at = d.time.write(new Date(result.nowMs).toISOString());
    const outbox = this;
    return d.runner.transaction(function* (tx) {
      const endpointId = yield* outbox.leased(tx, id, String(result.leaseToken));
      if (endpointId === undefined) return false;
      yield tx.run(
        `UPDATE ${d.table('webhook_deliveries')} SET status = 'delivered', attempts = attempts + 1, last_status_code = ?,
            last_error = NULL, last_attempt_at = ?, next_attempt_at = NULL, delivered_at = ?, lease_token = NULL, leased_until = NULL
          WHERE id = ?`,
        [result.statusCode ?? null, at, at, id],
      );
      yield tx.run(`UPDATE ${d.table('webhook_endpoints')} SET failing_since = NULL WHERE id = ?`, [endpointId]);
      return true;
    });
  }

  async fail(result: FailedAttempt): Promise<FailOutcome> {
    const id = validWebhookId('deliveryId', result?.deliveryId);
    const d = this.dialect;
    const atIso = new Date(result.nowMs).toISOString();
    const at = d.time.write(atIso);
    const outbox = this;
    return d.runner.transaction(function* (tx): Step<FailOutcome> {
      const endpointId = yield* outbox.leased(tx, id, String(result.leaseToken));
      if (endpointId === undefined) return { recorded: false, endpointDisabled: null };
      yield tx.run(
        `UPDATE ${d.table('webhook_deliveries')} SET status = ?, attempts = attempts + 1, last_status_code = ?, last_error = ?,
            last_attempt_at = ?, next_attempt_at = ?, lease_token = NULL, leased_until = NULL
          WHERE id = ?`,
        [
          result.retryAtMs === null ? 'failed' : 'pending',
          result.statusCode ?? null,
          result.error ?? null,
          at,
          result.retryAtMs === null ? null : d.time.write(new Date(result.retryAtMs).toISOString()),
          id,
        ],
      );
      // The streak starts at the first failure after a success; the endpoint is disabled once it is old enough.
      const [row] = yield* wait(
        tx.all<EndpointRow>(
          `SELECT ${ENDPOINT_COLUMNS}, failing_since FROM ${d.table('webhook_endpoints')} WHERE id = ?${d.lockRow}`,
          [endpointId],
        ),
      );
      if (!row) return { recorded: true, endpointDisabled: null };
      const since = row.failing_since ? d.time.read(row.failing_since) : atIso;
      const enabled = Boolean(row.enabled);
      const disable = enabled && result.nowMs - Date.parse(since) >= result.disableAfterMs;
      const disabledAt = disable ? atIso : row.disabled_at === null ? null : d.time.read(row.disabled_at);
      yield tx.run(
        `UPDATE ${d.table('webhook_endpoints')} SET failing_since = ?, enabled = ?, disabled_at = ? WHERE id = ?`,
        [d.time.write(since), enabled && !disable, disabledAt === null ? null : d.time.write(disabledAt), endpointId],
      );
      if (!disable) return { recorded: true, endpointDisabled: null };
      const stored = storedOf({ ...row, enabled: false, disabled_at: at }, d.time);
      return { recorded: true, endpointDisabled: endpointView(stored) };
    });
  }

  async deliveries(query: DeliveryQuery): Promise<WebhookDelivery[]> {
    const accountId = validCreditAccount(query?.accountId);
    const limit = validDeliveryLimit(query.limit);
    const d = this.dialect;
    const params: unknown[] = [accountId];
    let where = 'account_id = ?';
    if (query.endpointId !== undefined) {
      params.push(validWebhookId('endpointId', query.endpointId));
      where += ' AND endpoint_id = ?';
    }
    params.push(limit);
    const sql = `SELECT ${DELIVERY_COLUMNS} FROM ${d.table('webhook_deliveries')} WHERE ${where} ORDER BY id DESC LIMIT ?`;
    return d.runner.read(function* (tx) {
      return (yield* wait(tx.all<DeliveryRow>(sql, params))).map((row) => deliveryOf(row, d.time));
    });
  }

  /**
   * Deletes the events that ended before `olderThanMs` ago with their deliveries (see
   * `Outbox.prune`): pages of 200 events older than the cutoff, oldest first on the index
   * `(at, id)`, each page one transaction that keeps the events with a delivery pending or changed
   * since, and deletes the others and their deliveries (on the index `(event_id)`).
   */
  async prune(args: PruneArgs): Promise<PruneResult> {
    const cutoffMs = pruneCutoffMs(validPruneArgs(args, 'Outbox.prune').olderThanMs);
    const { time } = this.dialect;
    const cutoff = time.write(new Date(cutoffMs).toISOString());
    let after: { at: unknown; id: string } | undefined;
    let deleted = 0;
    for (;;) {
      const page = await this.prunePage(cutoff, after);
      deleted += page.deleted;
      const last = page.rows.at(-1);
      if (page.rows.length < PRUNE_PAGE || !last) return { deleted };
      // Pages follow (at, id), so the events one page kept are not read again by the next.
      after = { at: time.write(time.read(last.at)), id: last.id };
    }
  }

  // One page of a prune, in one transaction: the events older than `cutoff` after `from`, of which
  // those with no delivery pending or changed since go, with their deliveries.
  private prunePage(cutoff: unknown, from: { at: unknown; id: string } | undefined) {
    const events = this.dialect.table('outbox');
    const deliveries = this.dialect.table('webhook_deliveries');
    const where = from ? 'at < ? AND (at > ? OR (at = ? AND id > ?))' : 'at < ?';
    const params = from ? [cutoff, from.at, from.at, from.id, PRUNE_PAGE] : [cutoff, PRUNE_PAGE];
    return this.dialect.runner.transaction(function* (tx) {
      const rows = yield* wait(
        tx.all<{ id: string; at: Time }>(`SELECT id, at FROM ${events} WHERE ${where} ORDER BY at, id LIMIT ?`, params),
      );
      if (rows.length === 0) return { rows, deleted: 0 };
      const ids = rows.map((r) => r.id);
      const busy = yield* wait(
        tx.all<{ event_id: string }>(
          `SELECT DISTINCT event_id FROM ${deliveries} WHERE event_id IN (${marks(ids.length)})
            AND (status = 'pending' OR COALESCE(delivered_at, last_attempt_at, created_at) >= ?)`,
          [...ids, cutoff],
        ),
      );
      const kept = new Set(busy.map((r) => r.event_id));
      const gone = ids.filter((id) => !kept.has(id));
      if (gone.length === 0) return { rows, deleted: 0 };
      // A delivery that ended never becomes pending again, and an event gets no delivery after its
      // insert: what was read above still holds when the rows go.
      const inGone = `IN (${marks(gone.length)})`;
      const a = yield* wait(tx.run(`DELETE FROM ${deliveries} WHERE event_id ${inGone}`, gone));
      const b = yield* wait(tx.run(`DELETE FROM ${events} WHERE id ${inGone}`, gone));
      return { rows, deleted: a.changes + b.changes };
    });
  }

  // The endpoint of a pending delivery leased under `token`, locked until the transaction ends.
  private *leased(tx: X, id: string, token: string): Step<string | undefined> {
    const { lockRow } = this.dialect;
    const deliveries = this.dialect.table('webhook_deliveries');
    const [row] = yield* wait(
      tx.all<{ endpoint_id: string }>(
        `SELECT endpoint_id FROM ${deliveries} WHERE id = ? AND lease_token = ? AND status = 'pending'${lockRow}`,
        [id, token],
      ),
    );
    return row?.endpoint_id;
  }
}

class SqlWebhookEndpoints<X extends SqlTx> implements WebhookEndpoints {
  constructor(private readonly d: OutboxDialect<X>) {}

  async create(input: WebhookEndpointInput, options?: WebhookEndpointOptions): Promise<CreatedWebhookEndpoint> {
    const e = newWebhookEndpoint(input, Date.now(), options);
    const { time } = this.d;
    const hooks = this.d.table('webhook_endpoints');
    const params = [
      e.id,
      e.accountId,
      e.url,
      e.secret,
      JSON.stringify(e.eventTypes),
      e.enabled,
      time.write(e.createdAt),
      e.disabledAt === null ? null : time.write(e.disabledAt),
    ];
    await this.d.runner.transaction(function* (tx) {
      yield tx.run(`INSERT INTO ${hooks} (${ENDPOINT_COLUMNS}) VALUES (${marks(8)})`, params);
    });
    return { endpoint: endpointView(e), secret: e.secret };
  }

  async list(accountId: string): Promise<WebhookEndpoint[]> {
    const account = validCreditAccount(accountId);
    const { time } = this.d;
    const hooks = this.d.table('webhook_endpoints');
    return this.d.runner.read(function* (tx) {
      const sql = `SELECT ${ENDPOINT_COLUMNS} FROM ${hooks} WHERE account_id = ? ORDER BY created_at, id`;
      return (yield* wait(tx.all<EndpointRow>(sql, [account]))).map((r) => endpointView(storedOf(r, time)));
    });
  }

  async get(accountId: string, id: string): Promise<WebhookEndpoint | null> {
    const params = [validCreditAccount(accountId), validWebhookId('id', id)];
    const { time } = this.d;
    const hooks = this.d.table('webhook_endpoints');
    return this.d.runner.read(function* (tx) {
      const sql = `SELECT ${ENDPOINT_COLUMNS} FROM ${hooks} WHERE account_id = ? AND id = ?`;
      const [row] = yield* wait(tx.all<EndpointRow>(sql, params));
      return row ? endpointView(storedOf(row, time)) : null;
    });
  }

  async update(
    accountId: string,
    id: string,
    changes: WebhookEndpointChanges,
    options?: WebhookEndpointOptions,
  ): Promise<WebhookEndpoint | null> {
    const valid = validEndpointChanges(changes, options);
    const account = validCreditAccount(accountId);
    const endpointId = validWebhookId('id', id);
    const { time, lockRow } = this.d;
    const hooks = this.d.table('webhook_endpoints');
    return this.d.runner.transaction(function* (tx) {
      const [row] = yield* wait(
        tx.all<EndpointRow>(
          `SELECT ${ENDPOINT_COLUMNS}, failing_since FROM ${hooks} WHERE account_id = ? AND id = ?${lockRow}`,
          [account, endpointId],
        ),
      );
      if (!row) return null;
      const wasEnabled = Boolean(row.enabled);
      const stored = storedOf(row, time);
      const next: StoredWebhookEndpoint = {
        ...stored,
        url: valid.url ?? stored.url,
        eventTypes: valid.eventTypes ? [...valid.eventTypes] : stored.eventTypes,
        enabled: valid.enabled ?? wasEnabled,
        disabledAt:
          valid.enabled === true
            ? null
            : valid.enabled === false && wasEnabled
              ? new Date().toISOString()
              : stored.disabledAt,
      };
      const failingSince = valid.enabled === true && !wasEnabled ? null : (row.failing_since ?? null);
      yield tx.run(
        `UPDATE ${hooks} SET url = ?, event_types = ?, enabled = ?, disabled_at = ?, failing_since = ? WHERE id = ?`,
        [
          next.url,
          JSON.stringify(next.eventTypes),
          next.enabled,
          next.disabledAt === null ? null : time.write(next.disabledAt),
          failingSince === null ? null : time.write(time.read(failingSince)),
          endpointId,
        ],
      );
      return endpointView(next);
    });
  }

  async remove(accountId: string, id: string): Promise<boolean> {
    const account = validCreditAccount(accountId);
    const endpointId = validWebhookId('id', id);
    const { lockRow } = this.d;
    const hooks = this.d.table('webhook_endpoints');
    const deliveries = this.d.table('webhook_deliveries');
    return this.d.runner.transaction(function* (tx) {
      const found = yield* wait(
        tx.all(`SELECT id FROM ${hooks} WHERE account_id = ? AND id = ?${lockRow}`, [account, endpointId]),
      );
      if (found.length === 0) return false;
      yield tx.run(`DELETE FROM ${hooks} WHERE id = ?`, [endpointId]);
      yield tx.run(
        `UPDATE ${deliveries} SET status = 'failed', last_error = 'endpoint_removed', next_attempt_at = NULL
          WHERE endpoint_id = ? AND status = 'pending'`,
        [endpointId],
      );
      return true;
    });
  }
}

const readOrNull = (time: TimeCodec, value: Time | null) => (value === null ? null : time.read(value));

function storedOf(row: EndpointRow, time: TimeCodec): StoredWebhookEndpoint {
  return {
    id: row.id,
    accountId: row.account_id,
    url: row.url,
    secret: row.secret,
    eventTypes: jsonOf<string[]>(row.event_types),
    enabled: Boolean(row.enabled),
    createdAt: time.read(row.created_at),
    disabledAt: readOrNull(time, row.disabled_at),
  };
}

function eventOf(row: EventRow, time: TimeCodec): OutboxEvent {
  return Object.freeze({
    id: row.id,
    type: row.type,
    accountId: row.account_id,
    at: time.read(row.at),
    data: Object.freeze(jsonOf<Record<string, unknown>>(row.data)),
  });
}

function deliveryOf(row: DeliveryRow, time: TimeCodec): WebhookDelivery {
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
    lastAttemptAt: readOrNull(time, row.last_attempt_at),
    nextAttemptAt: readOrNull(time, row.next_attempt_at),
    createdAt: time.read(row.created_at),
    deliveredAt: readOrNull(time, row.delivered_at),
  });
}
