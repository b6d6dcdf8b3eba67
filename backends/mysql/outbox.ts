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
import { ER_DUP_ENTRY, errnoOf } from './errors.js';
import { isoTime, isoTimeOrNull, json, type Query, type SqlClient, sqlTime } from './sql-client.js';

interface EndpointRow {
  id: string;
  account_id: string;
  url: string;
  secret: string;
  event_types: unknown;
  enabled: number | boolean;
  created_at: string;
  disabled_at: string | null;
  failing_since?: string | null;
}

interface DeliveryRow {
  id: string;
  event_id: string;
  endpoint_id: string;
  account_id: string;
  event_type: string;
  status: WebhookDelivery['status'];
  attempts: number | string;
  last_status_code: number | string | null;
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
  data: unknown;
}

const ENDPOINT_COLUMNS = 'id, account_id, url, secret, event_types, enabled, created_at, disabled_at';
const DELIVERY_COLUMNS =
  'id, event_id, endpoint_id, account_id, event_type, status, attempts, last_status_code, last_error, last_attempt_at, next_attempt_at, created_at, delivered_at';
const EVENT_COLUMNS = 'id, account_id, type, at, data';

/**
 * The outbox of a `MysqlKeyStore` (its `outbox` capability), in the tables `<prefix>outbox`,
 * `<prefix>webhook_endpoints` and `<prefix>webhook_deliveries`. An event a `KeyManager` hands with a
 * key write is inserted in that write's transaction, with one delivery row per matching enabled
 * endpoint (an INSERT ... SELECT): a crash loses both or neither. A claim selects due rows
 * `FOR UPDATE SKIP LOCKED` (MySQL 8, MariaDB 10.6+) and sets a lease (`lease_token`, `leased_until`)
 * in the same transaction, so concurrent dispatchers, in any process, never claim the same delivery
 * while a lease holds; an outcome is recorded only under the token of the lease that sent it.
 */
export class MysqlOutbox implements Outbox {
  readonly endpoints: WebhookEndpoints;
  private readonly events: string;
  private readonly hooks: string;
  private readonly deliveriesTable: string;

  /** `prefix` validated by the store. */
  constructor(
    private readonly sql: SqlClient,
    prefix: string,
  ) {
    this.events = `${prefix}outbox`;
    this.hooks = `${prefix}webhook_endpoints`;
    this.deliveriesTable = `${prefix}webhook_deliveries`;
    this.endpoints = new MysqlWebhookEndpoints(sql, this.hooks, this.deliveriesTable);
  }

  /** Inserts `events` and their deliveries through `q`: inside the caller's transaction; an id already stored is skipped. */
  async appendIn(q: Query, events: readonly OutboxEvent[]): Promise<void> {
    for (const event of events) {
      const at = sqlTime(event.at);
      try {
        await q(`INSERT INTO ${this.events} (${EVENT_COLUMNS}) VALUES (?, ?, ?, ?, ?)`, [
          event.id,
          event.accountId,
          event.type,
          at,
          JSON.stringify(event.data),
        ]);
      } catch (err) {
        // An event already stored (published again with its id) keeps the deliveries it has. In MySQL a
        // failed statement does not end the transaction: the key write around it goes on.
        if (errnoOf(err) === ER_DUP_ENTRY) continue;
        throw err;
      }
      await q(
        `INSERT INTO ${this.deliveriesTable} (id, event_id, endpoint_id, account_id, event_type, status, attempts, next_attempt_at, created_at)
          SELECT CONCAT(?, ':', e.id), ?, e.id, e.account_id, ?, 'pending', 0, ?, ? FROM ${this.hooks} e
          WHERE e.account_id = ? AND e.enabled AND (JSON_CONTAINS(e.event_types, JSON_QUOTE(?)) OR JSON_CONTAINS(e.event_types, '"*"'))`,
        [event.id, event.id, event.type, at, at, event.accountId, event.type],
      );
    }
  }

  async publish(input: OutboxEventInput): Promise<OutboxEvent> {
    const event = outboxEventOf(input);
    return this.sql.transaction(async (q) => {
      await this.appendIn(q, [event]);
      const { rows } = await q<EventRow>(`SELECT ${EVENT_COLUMNS} FROM ${this.events} WHERE id = ?`, [event.id]);
      return rows[0] ? eventOf(rows[0]) : event;
    });
  }

  async claim(args: ClaimArgs): Promise<ClaimedDelivery[]> {
    const { nowMs, leaseMs, limit } = validClaimArgs(args);
    const now = sqlTime(new Date(nowMs).toISOString());
    const token = leaseToken();
    return this.sql.transaction(async (q) => {
      // Deliveries whose endpoint is gone or disabled end here, so that they never block the queue.
      await q(
        `UPDATE ${this.deliveriesTable} d LEFT JOIN ${this.hooks} e ON e.id = d.endpoint_id
          SET d.status = 'failed', d.next_attempt_at = NULL, d.lease_token = NULL,
            d.last_error = IF(e.id IS NULL, 'endpoint_removed', 'endpoint_disabled')
          WHERE d.status = 'pending' AND d.next_attempt_at <= ? AND (d.leased_until IS NULL OR d.leased_until <= ?)
            AND (e.id IS NULL OR NOT e.enabled)`,
        [now, now],
      );
      const { rows: due } = await q<{ id: string }>(
        `SELECT id FROM ${this.deliveriesTable}
          WHERE status = 'pending' AND next_attempt_at <= ? AND (leased_until IS NULL OR leased_until <= ?)
          ORDER BY next_attempt_at, id LIMIT ${Number(limit)} FOR UPDATE SKIP LOCKED`,
        [now, now],
      );
      if (due.length === 0) return [];
      const ids = due.map((r) => r.id);
      await q(`UPDATE ${this.deliveriesTable} SET lease_token = ?, leased_until = ? WHERE id IN (?)`, [
        token,
        sqlTime(new Date(nowMs + leaseMs).toISOString()),
        ids,
      ]);
      const { rows } = await q<DeliveryRow>(
        `SELECT ${DELIVERY_COLUMNS} FROM ${this.deliveriesTable} WHERE id IN (?) ORDER BY next_attempt_at, id`,
        [ids],
      );
      const { rows: events } = await q<EventRow>(`SELECT ${EVENT_COLUMNS} FROM ${this.events} WHERE id IN (?)`, [
        [...new Set(rows.map((r) => r.event_id))],
      ]);
      const { rows: hooks } = await q<EndpointRow>(`SELECT ${ENDPOINT_COLUMNS} FROM ${this.hooks} WHERE id IN (?)`, [
        [...new Set(rows.map((r) => r.endpoint_id))],
      ]);
      const eventById = new Map(events.map((e) => [e.id, eventOf(e)]));
      const hookById = new Map(hooks.map((h) => [h.id, storedOf(h)]));
      return rows.map((row) => {
        const hook = hookById.get(row.endpoint_id) as StoredWebhookEndpoint;
        return Object.freeze({
          delivery: deliveryOf(row),
          event: eventById.get(row.event_id) as OutboxEvent,
          endpoint: Object.freeze({ ...endpointView(hook), secret: hook.secret }),
          leaseToken: token,
        });
      });
    });
  }

  async complete(result: AttemptResult): Promise<boolean> {
    const id = validWebhookId('deliveryId', result?.deliveryId);
    const at = sqlTime(new Date(result.nowMs).toISOString());
    return this.sql.transaction(async (q) => {
      const endpointId = await this.leased(q, id, String(result.leaseToken));
      if (endpointId === undefined) return false;
      await q(
        `UPDATE ${this.deliveriesTable} SET status = 'delivered', attempts = attempts + 1, last_status_code = ?,
            last_error = NULL, last_attempt_at = ?, next_attempt_at = NULL, delivered_at = ?, lease_token = NULL, leased_until = NULL
          WHERE id = ?`,
        [result.statusCode ?? null, at, at, id],
      );
      await q(`UPDATE ${this.hooks} SET failing_since = NULL WHERE id = ?`, [endpointId]);
      return true;
    });
  }

  async fail(result: FailedAttempt): Promise<FailOutcome> {
    const id = validWebhookId('deliveryId', result?.deliveryId);
    const atIso = new Date(result.nowMs).toISOString();
    const at = sqlTime(atIso);
    return this.sql.transaction(async (q): Promise<FailOutcome> => {
      const endpointId = await this.leased(q, id, String(result.leaseToken));
      if (endpointId === undefined) return { recorded: false, endpointDisabled: null };
      await q(
        `UPDATE ${this.deliveriesTable} SET status = ?, attempts = attempts + 1, last_status_code = ?, last_error = ?,
            last_attempt_at = ?, next_attempt_at = ?, lease_token = NULL, leased_until = NULL
          WHERE id = ?`,
        [
          result.retryAtMs === null ? 'failed' : 'pending',
          result.statusCode ?? null,
          result.error ?? null,
          at,
          result.retryAtMs === null ? null : sqlTime(new Date(result.retryAtMs).toISOString()),
          id,
        ],
      );
      // The streak starts at the first failure after a success; the endpoint is disabled once it is old enough.
      const { rows } = await q<EndpointRow>(
        `SELECT ${ENDPOINT_COLUMNS}, failing_since FROM ${this.hooks} WHERE id = ? FOR UPDATE`,
        [endpointId],
      );
      const row = rows[0];
      if (!row) return { recorded: true, endpointDisabled: null };
      const since = row.failing_since ? isoTime(row.failing_since) : atIso;
      const disable = Boolean(row.enabled) && result.nowMs - Date.parse(since) >= result.disableAfterMs;
      await q(`UPDATE ${this.hooks} SET failing_since = ?, enabled = ?, disabled_at = ? WHERE id = ?`, [
        sqlTime(since),
        Boolean(row.enabled) && !disable,
        disable ? at : row.disabled_at,
        endpointId,
      ]);
      if (!disable) return { recorded: true, endpointDisabled: null };
      return { recorded: true, endpointDisabled: endpointView(storedOf({ ...row, enabled: false, disabled_at: at })) };
    });
  }

  async deliveries(query: DeliveryQuery): Promise<WebhookDelivery[]> {
    const accountId = validCreditAccount(query?.accountId);
    const limit = validDeliveryLimit(query.limit);
    const params: unknown[] = [accountId];
    let where = 'account_id = ?';
    if (query.endpointId !== undefined) {
      params.push(validWebhookId('endpointId', query.endpointId));
      where += ' AND endpoint_id = ?';
    }
    const { rows } = await this.sql.query<DeliveryRow>(
      `SELECT ${DELIVERY_COLUMNS} FROM ${this.deliveriesTable} WHERE ${where} ORDER BY id DESC LIMIT ${Number(limit)}`,
      params,
    );
    return rows.map(deliveryOf);
  }

  /** Locks the delivery when it is pending under lease `token`: its endpoint's id, or undefined. */
  private async leased(q: Query, id: string, token: string): Promise<string | undefined> {
    const { rows } = await q<{ endpoint_id: string }>(
      `SELECT endpoint_id FROM ${this.deliveriesTable} WHERE id = ? AND lease_token = ? AND status = 'pending' FOR UPDATE`,
      [id, token],
    );
    return rows[0]?.endpoint_id;
  }
}

class MysqlWebhookEndpoints implements WebhookEndpoints {
  constructor(
    private readonly sql: SqlClient,
    private readonly table: string,
    private readonly deliveries: string,
  ) {}

  async create(input: WebhookEndpointInput): Promise<CreatedWebhookEndpoint> {
    const e = newWebhookEndpoint(input, Date.now());
    await this.sql.query(`INSERT INTO ${this.table} (${ENDPOINT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, [
      e.id,
      e.accountId,
      e.url,
      e.secret,
      JSON.stringify(e.eventTypes),
      e.enabled,
      sqlTime(e.createdAt),
      sqlTime(e.disabledAt),
    ]);
    return { endpoint: endpointView(e), secret: e.secret };
  }

  async list(accountId: string): Promise<WebhookEndpoint[]> {
    const { rows } = await this.sql.query<EndpointRow>(
      `SELECT ${ENDPOINT_COLUMNS} FROM ${this.table} WHERE account_id = ? ORDER BY created_at, id`,
      [validCreditAccount(accountId)],
    );
    return rows.map((r) => endpointView(storedOf(r)));
  }

  async get(accountId: string, id: string): Promise<WebhookEndpoint | null> {
    const { rows } = await this.sql.query<EndpointRow>(
      `SELECT ${ENDPOINT_COLUMNS} FROM ${this.table} WHERE account_id = ? AND id = ?`,
      [validCreditAccount(accountId), validWebhookId('id', id)],
    );
    return rows[0] ? endpointView(storedOf(rows[0])) : null;
  }

  async update(accountId: string, id: string, changes: WebhookEndpointChanges): Promise<WebhookEndpoint | null> {
    const valid = validEndpointChanges(changes);
    const account = validCreditAccount(accountId);
    const endpointId = validWebhookId('id', id);
    return this.sql.transaction(async (q) => {
      const { rows } = await q<EndpointRow>(
        `SELECT ${ENDPOINT_COLUMNS}, failing_since FROM ${this.table} WHERE account_id = ? AND id = ? FOR UPDATE`,
        [account, endpointId],
      );
      const row = rows[0];
      if (!row) return null;
      const wasEnabled = Boolean(row.enabled);
      const enabled = valid.enabled ?? wasEnabled;
      const next: EndpointRow = {
        ...row,
        url: valid.url ?? row.url,
        event_types: valid.eventTypes ? JSON.stringify(valid.eventTypes) : row.event_types,
        enabled,
        disabled_at:
          valid.enabled === true
            ? null
            : valid.enabled === false && wasEnabled
              ? sqlTime(new Date().toISOString())
              : row.disabled_at,
        failing_since: valid.enabled === true && !wasEnabled ? null : (row.failing_since ?? null),
      };
      await q(
        `UPDATE ${this.table} SET url = ?, event_types = ?, enabled = ?, disabled_at = ?, failing_since = ? WHERE id = ?`,
        [
          next.url,
          typeof next.event_types === 'string' ? next.event_types : JSON.stringify(next.event_types),
          next.enabled,
          next.disabled_at,
          next.failing_since,
          endpointId,
        ],
      );
      return endpointView(storedOf(next));
    });
  }

  async remove(accountId: string, id: string): Promise<boolean> {
    const account = validCreditAccount(accountId);
    const endpointId = validWebhookId('id', id);
    return this.sql.transaction(async (q) => {
      const { affectedRows } = await q(`DELETE FROM ${this.table} WHERE account_id = ? AND id = ?`, [
        account,
        endpointId,
      ]);
      if (affectedRows === 0) return false;
      await q(
        `UPDATE ${this.deliveries} SET status = 'failed', last_error = 'endpoint_removed', next_attempt_at = NULL
          WHERE endpoint_id = ? AND status = 'pending'`,
        [endpointId],
      );
      return true;
    });
  }
}

function storedOf(row: EndpointRow): StoredWebhookEndpoint {
  return {
    id: row.id,
    accountId: row.account_id,
    url: row.url,
    secret: row.secret,
    eventTypes: json<string[]>(row.event_types),
    enabled: Boolean(row.enabled),
    createdAt: isoTime(row.created_at),
    disabledAt: isoTimeOrNull(row.disabled_at),
  };
}

function eventOf(row: EventRow): OutboxEvent {
  return Object.freeze({
    id: row.id,
    type: row.type,
    accountId: row.account_id,
    at: isoTime(row.at),
    data: Object.freeze(json<Record<string, unknown>>(row.data)),
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
    lastAttemptAt: isoTimeOrNull(row.last_attempt_at),
    nextAttemptAt: isoTimeOrNull(row.next_attempt_at),
    createdAt: isoTime(row.created_at),
    deliveredAt: isoTimeOrNull(row.delivered_at),
  });
}
