import type {
  AttemptResult,
  ClaimArgs,
  ClaimedDelivery,
  CreatedWebhookEndpoint,
  DeliveryQuery,
  FailedAttempt,
  FailOutcome,
  Outbox,
  OutboxEvent,
  OutboxEventInput,
  PruneArgs,
  PruneResult,
  StoredWebhookEndpoint,
  WebhookDelivery,
  WebhookEndpoint,
  WebhookEndpointChanges,
  WebhookEndpointInput,
  WebhookEndpointOptions,
  WebhookEndpoints,
} from 'keygate/store-kit';
import {
  endpointView,
  freezeDelivery,
  leaseToken,
  newWebhookEndpoint,
  outboxEventOf,
  pruneCutoffMs,
  validClaimArgs,
  validCreditAccount,
  validDeliveryLimit,
  validEndpointChanges,
  validPruneArgs,
  validWebhookId,
} from 'keygate/store-kit';
import { ADD_ENDPOINT, CLAIM, PUBLISH, RECORD, REMOVE_ENDPOINT, UPDATE_ENDPOINT } from './outbox-scripts.js';
import { PRUNE_EVENTS } from './retention-scripts.js';

/** The most events one prune script looks at. */
const PRUNE_PAGE = 100;

/** How the outbox reaches Redis: through its key store's command and script runners (errors already keygate's). */
export interface OutboxRedis {
  command(args: string[]): Promise<unknown>;
  run(script: string, keys: string[], args: string[]): Promise<unknown>;
}

/**
 * The outbox of a `RedisKeyStore` (its `outbox` capability); its keys are described in
 * `outbox-scripts.ts`. Events a `KeyManager` hands with a key write are stored by the same Lua
 * script as the write, with one delivery per matching enabled endpoint: both or neither. Claims,
 * outcomes and endpoint changes are scripts too, so two dispatchers never hold one delivery at
 * once. A claim reaches endpoint hashes by names it reads from `<prefix>webhooks:endpoint-keys`:
 * on a cluster, give the store a prefix that is one hash tag (`'{keygate}:'`) so that every key
 * shares a slot.
 */
export class RedisOutbox implements Outbox {
  readonly endpoints: WebhookEndpoints;

  constructor(
    private readonly redis: OutboxRedis,
    private readonly prefix: string,
  ) {
    this.endpoints = new RedisWebhookEndpoints(redis, prefix, (accountId) => this.hooksOf(accountId));
  }

  private get events(): string {
    return `${this.prefix}outbox:events`;
  }
  private get table(): string {
    return `${this.prefix}webhooks:deliveries`;
  }
  private get due(): string {
    return `${this.prefix}webhooks:due`;
  }
  private get byTime(): string {
    return `${this.prefix}outbox:by-time`;
  }
  private get endpointKeys(): string {
    return `${this.prefix}webhooks:endpoint-keys`;
  }
  hooksOf(accountId: string): string {
    return `${this.prefix}webhooks:endpoints:${encodeURIComponent(accountId)}`;
  }
  private logOf(accountId: string): string {
    return `${this.prefix}webhooks:log:${encodeURIComponent(accountId)}`;
  }

  /** The keys and arguments of `append_events` for `events` (see `outbox-scripts.ts`). */
  appendArgs(events: readonly OutboxEvent[]): { keys: string[]; args: string[] } {
    const keys = [this.events, this.table, this.due, this.byTime];
    const args = [String(events.length)];
    for (const e of events) {
      keys.push(this.hooksOf(e.accountId), this.logOf(e.accountId));
      args.push(e.id, JSON.stringify(e), e.type, e.accountId, String(Date.parse(e.at)), e.at);
    }
    return { keys, args };
  }

  async publish(input: OutboxEventInput): Promise<OutboxEvent> {
    const event = outboxEventOf(input);
    const { keys, args } = this.appendArgs([event]);
    const stored = await this.redis.run(PUBLISH, keys, args);
    return typeof stored === 'string' ? eventOf(stored) : event;
  }

  async claim(args: ClaimArgs): Promise<ClaimedDelivery[]> {
    const { nowMs, leaseMs, limit } = validClaimArgs(args);
    const token = leaseToken();
    const flat = (await this.redis.run(
      CLAIM,
      [this.table, this.due, this.events, this.endpointKeys],
      [String(nowMs), String(nowMs + leaseMs), String(limit), token],
    )) as string[];
    const out: ClaimedDelivery[] = [];
    for (let i = 0; i < flat.length; i += 3) {
      const hook = JSON.parse(flat[i + 2] as string) as StoredWebhookEndpoint;
      out.push(
        Object.freeze({
          delivery: deliveryOf(flat[i] as string),
          event: eventOf(flat[i + 1] as string),
          endpoint: Object.freeze({ ...endpointView(hook), secret: hook.secret }),
          leaseToken: token,
        }),
      );
    }
    return out;
  }

  async complete(result: AttemptResult): Promise<boolean> {
    const outcome = await this.record(result, 'delivered', null, 0);
    return outcome !== null;
  }

  async fail(result: FailedAttempt): Promise<FailOutcome> {
    const retry = result.retryAtMs;
    const outcome = await this.record(result, retry === null ? 'failed' : 'retry', retry, result.disableAfterMs);
    if (outcome === null) return { recorded: false, endpointDisabled: null };
    if (outcome === 'ok') return { recorded: true, endpointDisabled: null };
    return { recorded: true, endpointDisabled: endpointView(storedOf(outcome)) };
  }

  private async record(
    result: AttemptResult,
    kind: 'delivered' | 'retry' | 'failed',
    retryAtMs: number | null,
    disableAfterMs: number,
  ): Promise<string | null> {
    const id = validWebhookId('deliveryId', result?.deliveryId);
    const reply = await this.redis.run(
      RECORD,
      [this.table, this.due, this.endpointKeys],
      [
        id,
        String(result.leaseToken),
        String(result.nowMs),
        new Date(result.nowMs).toISOString(),
        result.statusCode === null || result.statusCode === undefined ? '' : String(result.statusCode),
        result.error ?? '',
        kind,
        retryAtMs === null ? '' : String(retryAtMs),
        retryAtMs === null ? '' : new Date(retryAtMs).toISOString(),
        String(disableAfterMs),
      ],
    );
    return typeof reply === 'string' ? reply : null;
  }

  /**
   * Deletes the events that ended before the cutoff with their deliveries (see `Outbox.prune`): pages
   * of 100 events older than it, oldest first by the time index, each page one script that keeps an
   * event with a delivery pending or changed since. Kept events are skipped by the next page.
   */
  async prune(args: PruneArgs): Promise<PruneResult> {
    const cutoffMs = pruneCutoffMs(validPruneArgs(args, 'Outbox.prune').olderThanMs);
    const cutoffIso = new Date(cutoffMs).toISOString();
    let kept = 0;
    let deleted = 0;
    for (;;) {
      const ids = (await this.redis.command([
        'ZRANGEBYSCORE',
        this.byTime,
        '-inf',
        `(${cutoffMs}`,
        'LIMIT',
        String(kept),
        String(PRUNE_PAGE),
      ])) as string[];
      if (ids.length === 0) return { deleted };
      const stored = (await this.redis.command(['HMGET', this.events, ...ids])) as (string | null)[];
      // The log of each event's account; an event no longer stored needs none (any key of the slot).
      const logs = stored.map((json) => (json ? this.logOf((JSON.parse(json) as OutboxEvent).accountId) : this.events));
      const [left, rows] = (await this.redis.run(
        PRUNE_EVENTS,
        [this.events, this.table, this.due, this.byTime, ...logs],
        [cutoffIso, ...ids],
      )) as [number, number];
      deleted += Number(rows);
      kept += ids.length - Number(left);
      if (ids.length < PRUNE_PAGE) return { deleted };
    }
  }

  async deliveries(query: DeliveryQuery): Promise<WebhookDelivery[]> {
    const accountId = validCreditAccount(query?.accountId);
    const endpointId = query.endpointId === undefined ? undefined : validWebhookId('endpointId', query.endpointId);
    const limit = validDeliveryLimit(query.limit);
    // Ids sort by event id (time-ordered); one endpoint's are picked from the account's.
    const page = endpointId === undefined ? ['LIMIT', '0', String(limit)] : [];
    const ids = (await this.redis.command(['ZREVRANGEBYLEX', this.logOf(accountId), '+', '-', ...page])) as string[];
    const chosen = (endpointId === undefined ? ids : ids.filter((id) => id.endsWith(`:${endpointId}`))).slice(0, limit);
    if (chosen.length === 0) return [];
    const rows = (await this.redis.command(['HMGET', this.table, ...chosen])) as (string | null)[];
    return rows.filter((r): r is string => typeof r === 'string').map(deliveryOf);
  }
}

class RedisWebhookEndpoints implements WebhookEndpoints {
  constructor(
    private readonly redis: OutboxRedis,
    private readonly prefix: string,
    private readonly hooksOf: (accountId: string) => string,
  ) {}

  async create(input: WebhookEndpointInput, options?: WebhookEndpointOptions): Promise<CreatedWebhookEndpoint> {
    const e = newWebhookEndpoint(input, Date.now(), options);
    await this.redis.run(
      ADD_ENDPOINT,
      [this.hooksOf(e.accountId), `${this.prefix}webhooks:endpoint-keys`],
      [e.id, JSON.stringify(e)],
    );
    return { endpoint: endpointView(e), secret: e.secret };
  }

  async list(accountId: string): Promise<WebhookEndpoint[]> {
    const values = (await this.redis.command(['HVALS', this.hooksOf(validCreditAccount(accountId))])) as string[];
    return values
      .map(storedOf)
      .sort((a, b) => (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : a.id < b.id ? -1 : 1))
      .map(endpointView);
  }

  async get(accountId: string, id: string): Promise<WebhookEndpoint | null> {
    const raw = await this.redis.command([
      'HGET',
      this.hooksOf(validCreditAccount(accountId)),
      validWebhookId('id', id),
    ]);
    return typeof raw === 'string' ? endpointView(storedOf(raw)) : null;
  }

  async update(
    accountId: string,
    id: string,
    changes: WebhookEndpointChanges,
    options?: WebhookEndpointOptions,
  ): Promise<WebhookEndpoint | null> {
    const valid = validEndpointChanges(changes, options);
    const raw = await this.redis.run(
      UPDATE_ENDPOINT,
      [this.hooksOf(validCreditAccount(accountId))],
      [
        validWebhookId('id', id),
        valid.url ?? '',
        valid.eventTypes ? JSON.stringify(valid.eventTypes) : '',
        valid.enabled === undefined ? '' : valid.enabled ? '1' : '0',
        new Date().toISOString(),
      ],
    );
    return typeof raw === 'string' ? endpointView(storedOf(raw)) : null;
  }

  async remove(accountId: string, id: string): Promise<boolean> {
    const removed = await this.redis.run(
      REMOVE_ENDPOINT,
      [this.hooksOf(validCreditAccount(accountId)), `${this.prefix}webhooks:endpoint-keys`],
      [validWebhookId('id', id)],
    );
    return Number(removed) === 1;
  }
}

function storedOf(json: string): StoredWebhookEndpoint {
  const e = JSON.parse(json) as StoredWebhookEndpoint;
  return {
    id: e.id,
    accountId: e.accountId,
    url: e.url,
    secret: e.secret,
    eventTypes: e.eventTypes,
    enabled: e.enabled,
    createdAt: e.createdAt,
    disabledAt: e.disabledAt ?? null,
  };
}

function eventOf(json: string): OutboxEvent {
  const e = JSON.parse(json) as OutboxEvent;
  // cjson never touched it: it is the JSON the writer stored.
  return Object.freeze({ id: e.id, type: e.type, accountId: e.accountId, at: e.at, data: Object.freeze(e.data ?? {}) });
}

function deliveryOf(json: string): WebhookDelivery {
  const d = JSON.parse(json) as WebhookDelivery & { lease?: unknown };
  return freezeDelivery({
    id: d.id,
    eventId: d.eventId,
    endpointId: d.endpointId,
    accountId: d.accountId,
    eventType: d.eventType,
    status: d.status,
    attempts: Number(d.attempts),
    lastStatusCode: d.lastStatusCode ?? null,
    lastError: d.lastError ?? null,
    lastAttemptAt: d.lastAttemptAt ?? null,
    nextAttemptAt: d.nextAttemptAt ?? null,
    createdAt: d.createdAt,
    deliveredAt: d.deliveredAt ?? null,
  });
}
