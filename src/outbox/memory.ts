import type { OutboxEvent } from '../types.js';
import { validAccountId } from '../validate/fields.js';
import { pruneCutoffMs, validPruneArgs } from '../validate/prune.js';
import type {
  AttemptResult,
  ClaimArgs,
  ClaimedDelivery,
  CreatedWebhookEndpoint,
  DeliveryQuery,
  FailedAttempt,
  FailOutcome,
  Outbox,
  OutboxEventInput,
  WebhookDelivery,
  WebhookEndpoint,
  WebhookEndpointChanges,
  WebhookEndpointInput,
  WebhookEndpointOptions,
  WebhookEndpoints,
} from '../vocabulary/outbox.js';
import type { PruneArgs, PruneResult } from '../vocabulary/retention.js';
import {
  endpointView,
  freezeDelivery,
  isoOrNull,
  leaseToken,
  newWebhookEndpoint,
  type StoredWebhookEndpoint,
  validClaimArgs,
  validDeliveryLimit,
  validEndpointChanges,
  validWebhookId,
} from './endpoint.js';
import { outboxEventOf, takesEvent } from './event.js';

interface DeliveryState {
  delivery: WebhookDelivery;
  dueMs: number;
  lease: string | null;
  leaseUntilMs: number;
}

interface EndpointState {
  endpoint: StoredWebhookEndpoint;
  failingSinceMs: number | null;
}

/**
 * An outbox for a `MemoryKeyStore` (`new MemoryKeyStore({ outbox: new MemoryOutbox() })`, then its
 * `outbox` capability; from `keygate/webhooks`, so that the root carries none): events, endpoints and deliveries in
 * this process's memory, written synchronously with the key write that caused them. Every claim,
 * complete and fail is one event-loop turn, so two dispatchers in this process never hold one
 * delivery at once. Gone when the process exits, like the keys: use PostgreSQL or Redis for events
 * that must survive a restart.
 *
 * @example
 * const outbox = new MemoryOutbox();
 * const keys = new KeyManager({ store: new MemoryKeyStore({ outbox }) });
 */
export class MemoryOutbox implements Outbox {
  private readonly events = new Map<string, OutboxEvent>();
  private readonly states = new Map<string, DeliveryState>();
  private readonly hooks = new Map<string, EndpointState>();
  readonly endpoints: WebhookEndpoints;

  constructor() {
    this.endpoints = new MemoryWebhookEndpoints(this.hooks, (endpointId) => this.endRemoved(endpointId));
  }

  /**
   * Stores events (validated already, by `outboxEventOf`) and their deliveries, synchronously; an
   * event whose id is already stored is skipped.
   */
  appendNow(events: readonly OutboxEvent[]): void {
    for (const event of events) {
      if (this.events.has(event.id)) continue;
      this.events.set(event.id, event);
      const atMs = Date.parse(event.at);
      for (const { endpoint } of this.hooks.values()) {
        if (endpoint.accountId !== event.accountId || !endpoint.enabled || !takesEvent(endpoint.eventTypes, event.type))
          continue;
        const delivery = freezeDelivery({
          id: `${event.id}:${endpoint.id}`,
          eventId: event.id,
          endpointId: endpoint.id,
          accountId: event.accountId,
          eventType: event.type,
          status: 'pending',
          attempts: 0,
          lastStatusCode: null,
          lastError: null,
          lastAttemptAt: null,
          nextAttemptAt: event.at,
          createdAt: event.at,
          deliveredAt: null,
        });
        this.states.set(delivery.id, { delivery, dueMs: atMs, lease: null, leaseUntilMs: 0 });
      }
    }
  }

  async publish(input: OutboxEventInput): Promise<OutboxEvent> {
    const event = outboxEventOf(input);
    this.appendNow([event]);
    return this.events.get(event.id) as OutboxEvent;
  }

  async claim(args: ClaimArgs): Promise<ClaimedDelivery[]> {
    const { nowMs, leaseMs, limit } = validClaimArgs(args);
    const due = [...this.states.values()]
      .filter((s) => s.delivery.status === 'pending' && s.dueMs <= nowMs && s.leaseUntilMs <= nowMs)
      .sort((a, b) => a.dueMs - b.dueMs || (a.delivery.id < b.delivery.id ? -1 : 1));
    const out: ClaimedDelivery[] = [];
    for (const state of due) {
      if (out.length >= limit) break;
      const hook = this.hooks.get(state.delivery.endpointId);
      if (!hook?.endpoint.enabled) {
        this.end(state, hook ? 'endpoint_disabled' : 'endpoint_removed');
        continue;
      }
      state.lease = leaseToken();
      state.leaseUntilMs = nowMs + leaseMs;
      out.push(
        Object.freeze({
          delivery: state.delivery,
          event: this.events.get(state.delivery.eventId) as OutboxEvent,
          endpoint: Object.freeze({ ...endpointView(hook.endpoint), secret: hook.endpoint.secret }),
          leaseToken: state.lease,
        }),
      );
    }
    return out;
  }

  async complete(result: AttemptResult): Promise<boolean> {
    const state = this.held(result);
    if (!state) return false;
    const at = isoOrNull(result.nowMs);
    state.delivery = freezeDelivery({
      ...state.delivery,
      status: 'delivered',
      attempts: state.delivery.attempts + 1,
      lastStatusCode: result.statusCode ?? null,
      lastError: null,
      lastAttemptAt: at,
      nextAttemptAt: null,
      deliveredAt: at,
    });
    state.lease = null;
    const hook = this.hooks.get(state.delivery.endpointId);
    if (hook) hook.failingSinceMs = null;
    return true;
  }

  async fail(result: FailedAttempt): Promise<FailOutcome> {
    const state = this.held(result);
    if (!state) return { recorded: false, endpointDisabled: null };
    const retry = result.retryAtMs;
    state.delivery = freezeDelivery({
      ...state.delivery,
      status: retry === null ? 'failed' : 'pending',
      attempts: state.delivery.attempts + 1,
      lastStatusCode: result.statusCode ?? null,
      lastError: result.error ?? null,
      lastAttemptAt: isoOrNull(result.nowMs),
      nextAttemptAt: isoOrNull(retry),
    });
    state.lease = null;
    state.leaseUntilMs = 0;
    if (retry !== null) state.dueMs = retry;
    const hook = this.hooks.get(state.delivery.endpointId);
    if (!hook) return { recorded: true, endpointDisabled: null };
    hook.failingSinceMs ??= result.nowMs;
    if (!hook.endpoint.enabled || result.nowMs - hook.failingSinceMs < result.disableAfterMs) {
      return { recorded: true, endpointDisabled: null };
    }
    hook.endpoint = Object.freeze({ ...hook.endpoint, enabled: false, disabledAt: isoOrNull(result.nowMs) });
    return { recorded: true, endpointDisabled: endpointView(hook.endpoint) };
  }

  async deliveries(query: DeliveryQuery): Promise<WebhookDelivery[]> {
    const accountId = validAccountId(query?.accountId);
    const endpointId = query.endpointId === undefined ? undefined : validWebhookId('endpointId', query.endpointId);
    const limit = validDeliveryLimit(query.limit);
    return [...this.states.values()]
      .map((s) => s.delivery)
      .filter((d) => d.accountId === accountId && (endpointId === undefined || d.endpointId === endpointId))
      .sort((a, b) => (a.id < b.id ? 1 : -1))
      .slice(0, limit);
  }

  async prune(args: PruneArgs): Promise<PruneResult> {
    const cutoff = pruneCutoffMs(validPruneArgs(args, 'Outbox.prune').olderThanMs);
    const byEvent = new Map<string, DeliveryState[]>();
    for (const state of this.states.values()) {
      const list = byEvent.get(state.delivery.eventId);
      if (list) list.push(state);
      else byEvent.set(state.delivery.eventId, [state]);
    }
    let deleted = 0;
    for (const event of this.events.values()) {
      const states = byEvent.get(event.id) ?? [];
      if (Date.parse(event.at) >= cutoff || !states.every((s) => ended(s.delivery, cutoff))) continue;
      for (const state of states) this.states.delete(state.delivery.id);
      this.events.delete(event.id);
      deleted += 1 + states.length;
    }
    return { deleted };
  }

  // The state of a delivery still pending and held under `leaseToken` (any lease time: the token is the proof).
  private held(result: AttemptResult): DeliveryState | undefined {
    const state = this.states.get(validWebhookId('deliveryId', result?.deliveryId));
    if (state?.delivery.status !== 'pending' || state.lease === null || state.lease !== result.leaseToken)
      return undefined;
    return state;
  }

  private end(state: DeliveryState, error: string): void {
    state.delivery = freezeDelivery({ ...state.delivery, status: 'failed', lastError: error, nextAttemptAt: null });
  }

  private endRemoved(endpointId: string): void {
    for (const state of this.states.values()) {
      if (state.delivery.endpointId === endpointId && state.delivery.status === 'pending')
        this.end(state, 'endpoint_removed');
    }
  }
}

// Whether a delivery is over (delivered or failed) and last changed before `cutoffMs`.
function ended(d: WebhookDelivery, cutoffMs: number): boolean {
  return d.status !== 'pending' && Date.parse(d.deliveredAt ?? d.lastAttemptAt ?? d.createdAt) < cutoffMs;
}

class MemoryWebhookEndpoints implements WebhookEndpoints {
  constructor(
    private readonly hooks: Map<string, EndpointState>,
    private readonly onRemove: (endpointId: string) => void,
  ) {}

  async create(input: WebhookEndpointInput, options?: WebhookEndpointOptions): Promise<CreatedWebhookEndpoint> {
    const endpoint = newWebhookEndpoint(input, Date.now(), options);
    this.hooks.set(endpoint.id, { endpoint, failingSinceMs: null });
    return { endpoint: endpointView(endpoint), secret: endpoint.secret };
  }

  async list(accountId: string): Promise<WebhookEndpoint[]> {
    const account = validAccountId(accountId);
    return [...this.hooks.values()]
      .filter((h) => h.endpoint.accountId === account)
      .map((h) => endpointView(h.endpoint));
  }

  async get(accountId: string, id: string): Promise<WebhookEndpoint | null> {
    const hook = this.own(accountId, id);
    return hook ? endpointView(hook.endpoint) : null;
  }

  async update(
    accountId: string,
    id: string,
    changes: WebhookEndpointChanges,
    options?: WebhookEndpointOptions,
  ): Promise<WebhookEndpoint | null> {
    const valid = validEndpointChanges(changes, options);
    const hook = this.own(accountId, id);
    if (!hook) return null;
    const enabling = valid.enabled === true && !hook.endpoint.enabled;
    hook.endpoint = Object.freeze({
      ...hook.endpoint,
      ...valid,
      ...(valid.enabled === true && { disabledAt: null }),
      ...(valid.enabled === false && hook.endpoint.enabled && { disabledAt: new Date().toISOString() }),
    });
    if (enabling) hook.failingSinceMs = null;
    return endpointView(hook.endpoint);
  }

  async remove(accountId: string, id: string): Promise<boolean> {
    const hook = this.own(accountId, id);
    if (!hook) return false;
    this.hooks.delete(hook.endpoint.id);
    this.onRemove(hook.endpoint.id);
    return true;
  }

  private own(accountId: string, id: string): EndpointState | undefined {
    const account = validAccountId(accountId);
    const hook = this.hooks.get(validWebhookId('id', id));
    return hook && hook.endpoint.accountId === account ? hook : undefined;
  }
}
