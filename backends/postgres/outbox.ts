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

import type { Query, SqlClient } from './sql-client.js';

interface EndpointRow {
  id: string;
  account_id: string;
  url: string;
  secret: string;
  event_types: unknown;
  enabled: boolean;
  created_at: Date | string;
  disabled_at: Date | string | null;
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
  last_attempt_at: Date | string | null;
  next_attempt_at: Date | string | null;
  created_at: Date | string;
  delivered_at: Date | string | null;
}

interface EventRow {
  id: string;
  account_id: string;
  type: string;
  at: Date | string;
  data: unknown;
}

const ENDPOINT_COLUMNS = 'id, account_id, url, secret, event_types, enabled, created_at, disabled_at';
const DELIVERY_COLUMNS =
  'id, event_id, endpoint_id, account_id, event_type, status, attempts, last_status_code, last_error, last_attempt_at, next_attempt_at, created_at, delivered_at';

/**
 * The outbox of a `PostgresKeyStore` (its `outbox` capability), in the tables `keygate_outbox`,
 * `keygate_webhook_endpoints` and `keygate_webhook_deliveries` of the store's schema (migration 7).
 * An event a `KeyManager` hands with a key write is inserted in that write's transaction, with one
 * delivery row per matching enabled endpoint (an INSERT ... SELECT): a crash loses both or neither.
 * A claim selects due rows `FOR UPDATE SKIP LOCKED` and sets a lease (`lease_token`, `leased_until`)
 * in one statement, so concurrent dispatchers, in any process, never claim the same delivery while a
 * lease holds; an outcome is recorded only under the token of the lease that sent it.
 */
export class PostgresOutbox implements Outbox {
  readonly endpoints: WebhookEndpoints;
  private readonly events: string;
  private readonly hooks: string;
  private readonly deliveriesTable: string;

  /** `schema` validated and quoted by the store. */
  constructor(
    private readonly sql: SqlClient,
    quotedSchema: string,
  ) {
    this.events = `${quotedSchema}.keygate_outbox`;
    this.hooks = `${quotedSchema}.keygate_webhook_endpoints`;
    this.deliveriesTable = `${quotedSchema}.keygate_webhook_deliveries`;
    this.endpoints = new PostgresWebhookEndpoints(sql, this.hooks, this.deliveriesTable);
  }

  /** Inserts `events` and their deliveries through `q`: inside the caller's transaction; an id already stored is skipped. */
  async appendIn(q: Query, events: readonly OutboxEvent[]): Promise<void> {
    for (const event of events) {
      const { rows } = await q(
        `INSERT INTO ${this.events} (id, account_id, type, at, data) VALUES ($1, $2, $3, $4, $5::jsonb)
          ON CONFLICT (id) DO NOTHING RETURNING id`,
        [event.id, event.accountId, event.type, event.at, JSON.stringify(event.data)],
      );
      // An event already stored (published again with its id) keeps the deliveries it has.
      if (rows.length === 0) continue;
      await q(
        `INSERT INTO ${this.deliveriesTable} (id, event_id, endpoint_id, account_id, event_type, status, attempts, next_attempt_at, created_at)
          SELECT $1 || ':' || e.id, $1, e.id, e.account_id, $3, 'pending', 0, $4, $4 FROM ${this.hooks} e
          WHERE e.account_id = $2 AND e.enabled AND (e.event_types @> to_jsonb($3::text) OR e.event_types @> '"*"'::jsonb)`,
        [event.id, event.accountId, event.type, event.at],
      );
    }
  }

  async publish(input: OutboxEventInput): Promise<OutboxEvent> {
    const event = outboxEventOf(input);
    return this.sql.transaction(async (q) => {
      await this.appendIn(q, [event]);
      const { rows } = await q<EventRow>(`SELECT id, account_id, type, at, data FROM ${this.events} WHERE id = $1`, [
        event.id,
      ]);
      return rows[0] ? eventOf(rows[0]) : event;
    });
  }

  async claim(args: ClaimArgs): Promise<ClaimedDelivery[]> {
    const { nowMs, leaseMs, limit } = validClaimArgs(args);
    const now = new Date(nowMs).toISOString();
    const token = leaseToken();
    return this.sql.transaction(async (q) => {
      // Deliveries whose endpoint is gone or disabled end here, so that they never block the queue.
      await q(
        `UPDATE ${this.deliveriesTable} d SET status = 'failed', next_attempt_at = NULL, lease_token = NULL,
            last_error = CASE WHEN e.id IS NULL THEN 'endpoint_removed' ELSE 'endpoint_disabled' END
          FROM ${this.deliveriesTable} d2 LEFT JOIN ${this.hooks} e ON e.id = d2.endpoint_id
          WHERE d.id = d2.id AND d.status = 'pending' AND d.next_attempt_at <= $1
            AND (d.leased_until IS NULL OR d.leased_until <= $1) AND (e.id IS NULL OR NOT e.enabled)`,
        [now],
      );
      const { rows } = await q<DeliveryRow>(
        `UPDATE ${this.deliveriesTable} d SET lease_token = $2, leased_until = $3
          WHERE d.id IN (
            SELECT id FROM ${this.deliveriesTable}
            WHERE status = 'pending' AND next_attempt_at <= $1 AND (leased_until IS NULL OR leased_until <= $1)
            ORDER BY next_attempt_at, id LIMIT $4 FOR UPDATE SKIP LOCKED)
          RETURNING ${DELIVERY_COLUMNS.split(', ')
            .map((c) => `d.${c}`)
            .join(', ')}`,
        [now, token, new Date(nowMs + leaseMs).toISOString(), limit],
      );
      if (rows.length === 0) return [];
      const { rows: events } = await q<EventRow>(
        `SELECT id, account_id, type, at, data FROM ${this.events} WHERE id = ANY($1::text[])`,
        [[...new Set(rows.map((r) => r.event_id))]],
      );
      const { rows: hooks } = await q<EndpointRow>(
        `SELECT ${ENDPOINT_COLUMNS} FROM ${this.hooks} WHERE id = ANY($1::text[])`,
        [[...new Set(rows.map((r) => r.endpoint_id))]],
      );
      const eventById = new Map(events.map((e) => [e.id, eventOf(e)]));
      const hookById = new Map(hooks.map((h) => [h.id, storedOf(h)]));
      return rows
        .sort((a, b) => ((a.next_attempt_at ?? '') < (b.next_attempt_at ?? '') ? -1 : 1))
        .map((row) => {
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
    const at = new Date(result.nowMs).toISOString();
    return this.sql.transaction(async (q) => {
      const { rows } = await q<{ endpoint_id: string }>(
        `UPDATE ${this.deliveriesTable} SET status = 'delivered', attempts = attempts + 1, last_status_code = $3,
            last_error = NULL, last_attempt_at = $4, next_attempt_at = NULL, delivered_at = $4, lease_token = NULL, leased_until = NULL
          WHERE id = $1 AND lease_token = $2 AND status = 'pending' RETURNING endpoint_id`,
        [id, String(result.leaseToken), result.statusCode ?? null, at],
      );
      if (!rows[0]) return false;
      await q(`UPDATE ${this.hooks} SET failing_since = NULL WHERE id = $1`, [rows[0].endpoint_id]);
      return true;
    });
  }

  async fail(result: FailedAttempt): Promise<FailOutcome> {
    const id = validWebhookId('deliveryId', result?.deliveryId);
    const at = new Date(result.nowMs).toISOString();
    return this.sql.transaction(async (q) => {
      const { rows } = await q<{ endpoint_id: string }>(
        `UPDATE ${this.deliveriesTable} SET status = $5, attempts = attempts + 1, last_status_code = $3, last_error = $6,
            last_attempt_at = $4, next_attempt_at = $7, lease_token = NULL, leased_until = NULL
          WHERE id = $1 AND lease_token = $2 AND status = 'pending' RETURNING endpoint_id`,
        [
          id,
          String(result.leaseToken),
          result.statusCode ?? null,
          at,
          result.retryAtMs === null ? 'failed' : 'pending',
          result.error ?? null,
          isoOrNull(result.retryAtMs),
        ],
      );
      if (!rows[0]) return { recorded: false, endpointDisabled: null };
      // The streak starts at the first failure after a success; the endpoint is disabled once it is old enough.
      const { rows: disabled } = await q<EndpointRow>(
        `UPDATE ${this.hooks} SET failing_since = COALESCE(failing_since, $2),
            enabled = enabled AND NOT ($2::timestamptz - COALESCE(failing_since, $2) >= $3::double precision * interval '1 millisecond'),
            disabled_at = CASE WHEN enabled AND $2::timestamptz - COALESCE(failing_since, $2) >= $3::double precision * interval '1 millisecond'
              THEN $2::timestamptz ELSE disabled_at END
          WHERE id = $1 RETURNING ${ENDPOINT_COLUMNS}, (disabled_at = $2::timestamptz AND NOT enabled) AS just_disabled`,
        [rows[0].endpoint_id, at, result.disableAfterMs],
      );
      const row = disabled[0] as (EndpointRow & { just_disabled: boolean }) | undefined;
      return { recorded: true, endpointDisabled: row?.just_disabled ? endpointView(storedOf(row)) : null };
    });
  }

  async deliveries(query: DeliveryQuery): Promise<WebhookDelivery[]> {
    const accountId = validCreditAccount(query?.accountId);
    const limit = validDeliveryLimit(query.limit);
    const params: unknown[] = [accountId, limit];
    let where = 'account_id = $1';
    if (query.endpointId !== undefined) {
      params.push(validWebhookId('endpointId', query.endpointId));
      where += ` AND endpoint_id = $3`;
    }
    const { rows } = await this.sql.query<DeliveryRow>(
      `SELECT ${DELIVERY_COLUMNS} FROM ${this.deliveriesTable} WHERE ${where} ORDER BY id DESC LIMIT $2`,
      params,
    );
    return rows.map(deliveryOf);
  }
}

class PostgresWebhookEndpoints implements WebhookEndpoints {
  constructor(
    private readonly sql: SqlClient,
    private readonly table: string,
    private readonly deliveries: string,
  ) {}

  async create(input: WebhookEndpointInput): Promise<CreatedWebhookEndpoint> {
    const e = newWebhookEndpoint(input, Date.now());
    await this.sql.query(
      `INSERT INTO ${this.table} (${ENDPOINT_COLUMNS}) VALUES ($1, $2, $3, $4, $5::jsonb, $6, $7, $8)`,
      [e.id, e.accountId, e.url, e.secret, JSON.stringify(e.eventTypes), e.enabled, e.createdAt, e.disabledAt],
    );
    return { endpoint: endpointView(e), secret: e.secret };
  }

  async list(accountId: string): Promise<WebhookEndpoint[]> {
    const { rows } = await this.sql.query<EndpointRow>(
      `SELECT ${ENDPOINT_COLUMNS} FROM ${this.table} WHERE account_id = $1 ORDER BY created_at, id`,
      [validCreditAccount(accountId)],
    );
    return rows.map((r) => endpointView(storedOf(r)));
  }

  async get(accountId: string, id: string): Promise<WebhookEndpoint | null> {
    const { rows } = await this.sql.query<EndpointRow>(
      `SELECT ${ENDPOINT_COLUMNS} FROM ${this.table} WHERE account_id = $1 AND id = $2`,
      [validCreditAccount(accountId), validWebhookId('id', id)],
    );
    return rows[0] ? endpointView(storedOf(rows[0])) : null;
  }

  async update(accountId: string, id: string, changes: WebhookEndpointChanges): Promise<WebhookEndpoint | null> {
    const valid = validEndpointChanges(changes);
    const { rows } = await this.sql.query<EndpointRow>(
      `UPDATE ${this.table} SET url = COALESCE($3::text, url), event_types = COALESCE($4::jsonb, event_types),
          enabled = COALESCE($5::boolean, enabled),
          disabled_at = CASE WHEN $5::boolean IS TRUE THEN NULL WHEN $5::boolean IS FALSE AND enabled THEN now() ELSE disabled_at END,
          failing_since = CASE WHEN $5::boolean IS TRUE AND NOT enabled THEN NULL ELSE failing_since END
        WHERE account_id = $1 AND id = $2 RETURNING ${ENDPOINT_COLUMNS}`,
      [
        validCreditAccount(accountId),
        validWebhookId('id', id),
        valid.url ?? null,
        valid.eventTypes ? JSON.stringify(valid.eventTypes) : null,
        valid.enabled ?? null,
      ],
    );
    return rows[0] ? endpointView(storedOf(rows[0])) : null;
  }

  async remove(accountId: string, id: string): Promise<boolean> {
    const account = validCreditAccount(accountId);
    const endpointId = validWebhookId('id', id);
    return this.sql.transaction(async (q) => {
      const { rows } = await q(`DELETE FROM ${this.table} WHERE account_id = $1 AND id = $2 RETURNING id`, [
        account,
        endpointId,
      ]);
      if (rows.length === 0) return false;
      await q(
        `UPDATE ${this.deliveries} SET status = 'failed', last_error = 'endpoint_removed', next_attempt_at = NULL
          WHERE endpoint_id = $1 AND status = 'pending'`,
        [endpointId],
      );
      return true;
    });
  }
}

const iso = (value: Date | string) => new Date(value).toISOString();
const isoNull = (value: Date | string | null) => (value === null ? null : iso(value));
const json = (value: unknown) => (typeof value === 'string' ? JSON.parse(value) : value);

function storedOf(row: EndpointRow): StoredWebhookEndpoint {
  return {
    id: row.id,
    accountId: row.account_id,
    url: row.url,
    secret: row.secret,
    eventTypes: json(row.event_types) as string[],
    enabled: row.enabled,
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
    data: Object.freeze(json(row.data) as Record<string, unknown>),
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
