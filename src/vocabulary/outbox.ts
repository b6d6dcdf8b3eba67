import type { OutboxEvent } from '../types.js';
import type { PruneArgs, PruneResult } from './retention.js';

// The outbox (docs/guide/webhooks.md, "How an event leaves the process"): events that must leave the
// process, written in the same step as the change that caused them, and their deliveries to each
// account's webhook endpoints. A backend that holds one declares it as its `outbox` capability.

/**
 * An event handed to `Outbox.publish`: a `KeygateEvent` (its fields other than `type`, `accountId`
 * and `at` become `data`), or this shape with `data` given. `accountId` must be an account's id.
 *
 * @example
 * await outbox.publish({ type: 'key.leaked', accountId: 'acct_1', data: { keyId, source: 'github' } });
 */
export interface OutboxEventInput {
  /**
   * The event's id, `evt_` and 23 lower-case base-36 characters (`stableEventId` from
   * `keygate/webhooks` derives one from an idempotency key). An outbox that already holds an event
   * with this id stores nothing and returns that event: publishing it again, from any process, is a no-op.
   * @default a new id
   */
  readonly id?: string;
  readonly type: string;
  readonly accountId: string | null;
  /** ISO 8601. @default the time of the call */
  readonly at?: string;
  /** @default {} */
  readonly data?: Readonly<Record<string, unknown>>;
}

/**
 * A webhook endpoint of an account, as shown: everything but its secret, which `create` returns once.
 * `eventTypes` lists the event types it receives, or `['*']` for every one. An endpoint whose
 * deliveries fail without a break for `disableAfterMs` (the dispatcher's, default 24 hours) is
 * disabled (`enabled: false`, `disabledAt` set) and a `webhook.endpoint_disabled` event is published.
 *
 * @example
 * { id: 'whe_…', accountId: 'acct_1', url: 'https://example.com/hooks', eventTypes: ['*'],
 *   enabled: true, createdAt: '2026-11-24T18:00:00.000Z', disabledAt: null }
 */
export interface WebhookEndpoint {
  readonly id: string;
  readonly accountId: string;
  readonly url: string;
  readonly eventTypes: readonly string[];
  readonly enabled: boolean;
  readonly createdAt: string;
  readonly disabledAt: string | null;
}

/**
 * Input of `WebhookEndpoints.create`.
 *
 * @example
 * await outbox.endpoints.create({ accountId: 'acct_1', url: 'https://example.com/hooks', eventTypes: ['key.revoked'] });
 */
export interface WebhookEndpointInput {
  accountId: string;
  /**
   * An `https:` (or `http:`) URL of at most 2,000 characters, without credentials, whose host is not
   * an internal target (loopback, private, link-local, metadata...: refused unless the operator's
   * `allowPrivateNetworks`).
   */
  url: string;
  /** 1-50 event types, or `['*']`. @default ['*'] */
  eventTypes?: readonly string[];
}

/**
 * The operator's options of `WebhookEndpoints.create` and `update`: never an account's to set (a
 * dashboard or an API that adds endpoints for accounts passes none).
 *
 * @example
 * await outbox.endpoints.create({ accountId: 'acct_dev', url: 'http://127.0.0.1:4000/' }, { allowPrivateNetworks: true });
 */
export interface WebhookEndpointOptions {
  /**
   * Accept a URL whose host is loopback, private, link-local, a cloud metadata address or another
   * internal target (docs/guide/webhooks.md, "Where an endpoint may point"). For development only;
   * the dispatcher must be given the same to send there. @default false
   */
  allowPrivateNetworks?: boolean;
}

/**
 * What `WebhookEndpoints.update` may change. Enabling an endpoint clears its failure streak.
 *
 * @example
 * await outbox.endpoints.update('acct_1', endpoint.id, { enabled: true });
 */
export interface WebhookEndpointChanges {
  url?: string;
  eventTypes?: readonly string[];
  enabled?: boolean;
}

/**
 * A new endpoint and its signing secret (`whsec_` and base64): returned this once, kept by the
 * backend to sign deliveries, shown by no listing.
 *
 * @example
 * const { endpoint, secret } = await outbox.endpoints.create({ accountId, url });
 */
export interface CreatedWebhookEndpoint {
  readonly endpoint: WebhookEndpoint;
  readonly secret: string;
}

/**
 * The webhook endpoints of every account, each call scoped to one account: another account's
 * endpoint id is unknown (`null`, `false`). Bad input is an `InvalidInputError` naming the field.
 *
 * @example
 * const { secret } = await outbox.endpoints.create({ accountId: 'acct_1', url: 'https://example.com/hooks' });
 * await outbox.endpoints.list('acct_1');
 */
export interface WebhookEndpoints {
  /** Adds an endpoint with a new secret (`whsec_…`, 32 random bytes). An internal `url` is refused unless `options.allowPrivateNetworks`. */
  create(input: WebhookEndpointInput, options?: WebhookEndpointOptions): Promise<CreatedWebhookEndpoint>;
  /** The account's endpoints, oldest first. */
  list(accountId: string): Promise<WebhookEndpoint[]>;
  /** The endpoint, or null when the account has none with that id. */
  get(accountId: string, id: string): Promise<WebhookEndpoint | null>;
  /** Changes it and returns it, or null when the account has none with that id. A new `url` is checked as `create` checks it. */
  update(
    accountId: string,
    id: string,
    changes: WebhookEndpointChanges,
    options?: WebhookEndpointOptions,
  ): Promise<WebhookEndpoint | null>;
  /** Removes it (its pending deliveries end as `failed`); false when the account has none with that id. */
  remove(accountId: string, id: string): Promise<boolean>;
}

/**
 * One delivery of one event to one endpoint, as the delivery log shows it. `pending` until a 2xx
 * (`delivered`) or until it gives up (`failed`: retries exhausted, or its endpoint disabled or removed).
 *
 * @example
 * { id: 'evt_…:whe_…', eventId: 'evt_…', endpointId: 'whe_…', accountId: 'acct_1', eventType: 'key.revoked',
 *   status: 'pending', attempts: 2, lastStatusCode: 503, lastError: null, lastAttemptAt: '…', nextAttemptAt: '…',
 *   createdAt: '…', deliveredAt: null }
 */
export interface WebhookDelivery {
  /** `<event id>:<endpoint id>`. */
  readonly id: string;
  readonly eventId: string;
  readonly endpointId: string;
  readonly accountId: string;
  readonly eventType: string;
  readonly status: 'pending' | 'delivered' | 'failed';
  /** Attempts whose outcome was recorded. */
  readonly attempts: number;
  /** The HTTP status of the last attempt, or null when it got none (a timeout, a refused connection). */
  readonly lastStatusCode: number | null;
  /**
   * Why the last attempt failed, as a class and never the low-level error (no address, port or
   * errno text): `timeout`, `connection_failed`, `tls_error`, `refused_target` (the host is or
   * resolved to an internal address), `http_3xx`, `http_4xx`, `http_5xx` (with `lastStatusCode`),
   * `endpoint_disabled`, `endpoint_removed`; null after a success or before any attempt.
   */
  readonly lastError: string | null;
  readonly lastAttemptAt: string | null;
  /** When it is due next, ISO 8601; null once delivered or failed. */
  readonly nextAttemptAt: string | null;
  readonly createdAt: string;
  readonly deliveredAt: string | null;
}

/**
 * A delivery a dispatcher holds under a lease: what it needs to send it, and the token that
 * records its outcome. Until `leaseMs` after the claim, no other claim returns it.
 *
 * @example
 * const [claimed] = await outbox.claim({ nowMs: Date.now(), leaseMs: 30_000 });
 */
export interface ClaimedDelivery {
  readonly delivery: WebhookDelivery;
  readonly event: OutboxEvent;
  readonly endpoint: WebhookEndpoint & { readonly secret: string };
  readonly leaseToken: string;
}

/**
 * Arguments of `Outbox.claim`. Times come from the dispatcher's clock, in epoch milliseconds.
 *
 * @example
 * await outbox.claim({ nowMs: clock(), leaseMs: 30_000, limit: 20 });
 */
export interface ClaimArgs {
  nowMs: number;
  /** How long the claim holds each delivery, in milliseconds (> 0). */
  leaseMs: number;
  /** The most deliveries to claim, 1-1,000. @default 20 */
  limit?: number;
}

/**
 * The outcome of one attempt, for `Outbox.complete` (a 2xx) or `Outbox.fail`.
 *
 * @example
 * await outbox.fail({ deliveryId, leaseToken, nowMs, statusCode: 503, retryAtMs: nowMs + 30_000, disableAfterMs: 86_400_000 });
 */
export interface AttemptResult {
  deliveryId: string;
  leaseToken: string;
  nowMs: number;
  /** The response's status, or null when there was none. @default null */
  statusCode?: number | null;
  /** Why it failed, as a class the account may see (`WebhookDelivery.lastError`). @default null */
  error?: string | null;
}

/**
 * A failed attempt: when to retry (null: give up, the delivery ends `failed`), and after how long
 * an unbroken streak of failures disables the endpoint.
 *
 * @example
 * const failed: FailedAttempt = { deliveryId, leaseToken, nowMs, statusCode: 500, retryAtMs: null, disableAfterMs: 86_400_000 };
 */
export interface FailedAttempt extends AttemptResult {
  retryAtMs: number | null;
  /** Milliseconds since the endpoint's first failure after its last success that disable it. */
  disableAfterMs: number;
}

/**
 * What recording a failure did: `recorded` false when the lease was lost (another claim took the
 * delivery, or it is no longer pending), and whether this failure disabled the endpoint (then the
 * endpoint as it now is).
 *
 * @example
 * const { endpointDisabled } = await outbox.fail(attempt);
 */
export interface FailOutcome {
  readonly recorded: boolean;
  readonly endpointDisabled: WebhookEndpoint | null;
}

/**
 * Which deliveries to list: an account's (or one endpoint's of it), newest first.
 *
 * @example
 * await outbox.deliveries({ accountId: 'acct_1', limit: 50 });
 */
export interface DeliveryQuery {
  accountId: string;
  endpointId?: string;
  /** 1 to 1,000. @default 50 */
  limit?: number;
}

/**
 * The outbox of a backend: events that must not be lost and their webhook deliveries. A key store
 * that holds one (its `outbox` capability: `MemoryKeyStore`, `PostgresKeyStore` over PostgreSQL or
 * PGlite, `RedisKeyStore`) writes the events a `KeyManager` hands with a key write (`key.created`,
 * `key.updated`, `key.rotated`, `key.suspended`, `key.resumed`, `key.revoked`) in the same
 * transaction, script or turn as the write itself: both happen, or neither. Each event gets one
 * delivery per enabled endpoint of its account that takes its type, created with it. A dispatcher
 * (`createWebhookDispatcher` in `keygate/webhooks`) claims due deliveries under a lease, sends them,
 * and records each outcome. Proven by `describeOutboxContract` from `keygate/testing`.
 *
 * @example
 * const outbox = capabilityOf(store, 'outbox');
 * await outbox?.publish({ type: 'credits.low', accountId: 'acct_1', data: { balance: 40, threshold: 50 } });
 */
export interface Outbox {
  /** The account's webhook endpoints. */
  readonly endpoints: WebhookEndpoints;
  /**
   * Stores an event raised outside a key write (credits, leaks, expiry) and its deliveries. Given an
   * `id` the outbox already holds, it stores nothing and returns the stored event.
   */
  publish(event: OutboxEventInput): Promise<OutboxEvent>;
  /** Claims due deliveries of enabled endpoints, oldest due first, under a lease of `leaseMs`. */
  claim(args: ClaimArgs): Promise<ClaimedDelivery[]>;
  /** Records a delivered attempt; false (nothing changed) when the lease was lost. */
  complete(result: AttemptResult): Promise<boolean>;
  /** Records a failed attempt and schedules the next (or gives up). */
  fail(result: FailedAttempt): Promise<FailOutcome>;
  /** The delivery log of an account, newest first. */
  deliveries(query: DeliveryQuery): Promise<WebhookDelivery[]>;
  /**
   * Deletes the events that ended more than `olderThanMs` ago, with their deliveries: an event
   * none of whose deliveries is pending (each delivered or failed, or it had none) and whose last
   * change (its `at`, and each delivery's `deliveredAt`, else `lastAttemptAt`, else `createdAt`) is
   * older. A pending delivery keeps its event, however old. `deleted` counts events and deliveries.
   * Works in batches, each its own short transaction or script. Once an event is gone, publishing
   * its id again stores it anew: an id is remembered as long as its event is kept. The webhook
   * dispatcher runs it (`retainMs`, 7 days by default); `keygate webhooks prune` runs it by hand.
   */
  prune(args: PruneArgs): Promise<PruneResult>;
}
