import { InvalidInputError } from '#errors';
import { checksResolvedAddresses, sendWebhook } from '#webhook-send';
import { type EventHook, emitSafely } from '../src/events.js';
import { refusedHost } from '../src/outbox/targets.js';
import { checkOptionNames } from '../src/validate/options.js';
import { validWholeNumber } from '../src/validate/whole.js';
import type { ClaimedDelivery, Outbox, WebhookEndpoint } from '../src/vocabulary/outbox.js';
import { type FullRetryPolicy, nextAttemptMs, type RetryPolicy, validRetryPolicy } from './backoff.js';
import { type DeliveryFailure, failureOfError, failureOfStatus, RefusedTargetError } from './failure.js';
import { repeating } from './repeat.js';
import type { ResolveHost } from './send/types.js';
import { signWebhook } from './sign.js';

const OPTION_NAMES = [
  'outbox',
  'fetch',
  'lookup',
  'clock',
  'random',
  'timeoutMs',
  'leaseMs',
  'batchSize',
  'concurrency',
  'endpointConcurrency',
  'retry',
  'disableAfterMs',
  'allowPrivateNetworks',
  'retainMs',
  'onEvent',
  'onAttemptFailed',
] as const;
const RETRY_OPTION_NAMES = ['baseDelayMs', 'maxDelayMs', 'giveUpAfterMs'] as const;

/** How long a started dispatcher keeps an event that ended, by default: 7 days, in milliseconds. */
const DEFAULT_RETAIN_MS = 7 * 86_400_000;

// How often a started dispatcher prunes, by its clock: at start, then once an hour.
const PRUNE_EVERY_MS = 3_600_000;

/**
 * A failed attempt as the operator sees it, with the error itself (`onAttemptFailed`); the account
 * sees `failure` only.
 *
 * @example
 * onAttemptFailed: ({ failure, endpointId, error }) => log.warn({ failure, endpointId, err: error }, 'webhook attempt failed')
 */
export interface AttemptFailure {
  readonly deliveryId: string;
  readonly endpointId: string;
  readonly accountId: string;
  /** The class the delivery log records. */
  readonly failure: DeliveryFailure;
  /** The response's status, or null when there was none. */
  readonly statusCode: number | null;
  /** What the send threw (a refused target names the host and why; a socket error its address and port), or null for a status. */
  readonly error: unknown;
}

/**
 * Options of {@link createWebhookDispatcher}.
 *
 * @example
 * const options: WebhookDispatcherOptions = { outbox: capabilityOf(store, 'outbox')!, timeoutMs: 5_000 };
 */
export interface WebhookDispatcherOptions {
  /** Where events and deliveries are: a store's `outbox` capability. */
  outbox: Outbox;
  /**
   * Sends instead of keygate's own transport. The URL's host is still checked, but not the addresses
   * a name resolves to: that is this function's to do. @default on Node, node:http(s) through a
   * lookup that checks every address; elsewhere, `globalThis.fetch`
   */
  fetch?: (input: string, init: RequestInit) => Promise<Response>;
  /**
   * Resolves a host name to all its addresses, on Node (every one is checked before any is connected
   * to; given elsewhere, the dispatcher is refused at construction). @default node:dns `lookup` with `all: true`
   */
  lookup?: ResolveHost;
  /** Now, in epoch milliseconds. @default Date.now */
  clock?: () => number;
  /** A number in [0, 1), for the retries' jitter. @default Math.random */
  random?: () => number;
  /** How long one attempt may take before it counts as failed (`timeout`), in milliseconds. @default 10_000 */
  timeoutMs?: number;
  /** How long a claim holds a delivery, in milliseconds; more than `timeoutMs`. @default 60_000 */
  leaseMs?: number;
  /** The most deliveries one `runOnce` claims. @default 20 */
  batchSize?: number;
  /**
   * The most attempts this dispatcher has in flight at once: a run claims no more than the room
   * left. Deliveries waiting for their endpoint's turn take no room, so a slow endpoint's queue does
   * not crowd out the others. @default 20
   */
  concurrency?: number;
  /**
   * The most attempts to one endpoint at once; its other deliveries wait their turn, and one whose
   * lease would end before its attempt could is left for a later claim. @default 2
   */
  endpointConcurrency?: number;
  /** Exponential backoff with full jitter. @default { baseDelayMs: 30_000, maxDelayMs: 21_600_000, giveUpAfterMs: 86_400_000 } */
  retry?: RetryPolicy;
  /**
   * An endpoint whose attempts fail without a break (no 2xx in between) for this many
   * milliseconds, or one of whose deliveries gives up (past `retry.giveUpAfterMs`), is disabled, and
   * `webhook.endpoint_disabled` is published. @default 86_400_000 (24 hours)
   */
  disableAfterMs?: number;
  /**
   * Send to loopback, private, link-local, metadata and other internal addresses too
   * (docs/guide/webhooks.md, "Where an endpoint may point"). For development and tests against a
   * local receiver, never in production; the operator's, never an account's. @default false
   */
  allowPrivateNetworks?: boolean;
  /**
   * How long an event that ended (delivered to every endpoint, or given up on) is kept with its
   * deliveries before a started dispatcher deletes it (`Outbox.prune`), in milliseconds: at `start`,
   * then once an hour by `clock`, never while a delivery of it is pending. `false` keeps every event
   * (prune by hand: `outbox.prune({ olderThanMs })`, `keygate webhooks prune`). An event's id is
   * remembered only while the event is kept: keep this no shorter than `keyNotifications`'
   * `publishWithinMs`. @default 604_800_000 (7 days)
   */
  retainMs?: number | false;
  /** Receives `webhook.endpoint_disabled`. Its failures are swallowed. @default undefined */
  onEvent?: EventHook;
  /**
   * Receives each failed attempt with its error (the operator's log; no account sees it). Its
   * failures are swallowed. @default undefined
   */
  onAttemptFailed?: (failure: AttemptFailure) => void;
}

/**
 * What one {@link WebhookDispatcher.runOnce} did.
 *
 * @example
 * const { delivered, failed, gaveUp } = await dispatcher.runOnce();
 */
export interface DispatchReport {
  /**
   * Deliveries claimed. One whose endpoint's turn came too late for its lease is left for a later
   * claim and counted here only.
   */
  readonly claimed: number;
  /** Answered 2xx. */
  readonly delivered: number;
  /** Failed, to be tried again. */
  readonly failed: number;
  /** Failed for good (past `retry.giveUpAfterMs`). */
  readonly gaveUp: number;
}

/**
 * Sends the outbox's deliveries. See {@link createWebhookDispatcher}.
 *
 * @example
 * const dispatcher = createWebhookDispatcher({ outbox });
 * dispatcher.start({ intervalMs: 5_000 });
 */
export interface WebhookDispatcher {
  /** Claims due deliveries (as many as there is room for), sends them, and resolves once every outcome is recorded. */
  runOnce(): Promise<DispatchReport>;
  /**
   * Claims and sends every `intervalMs` (default 5,000) on an unref'd timer, until `stop`, without
   * waiting for the attempts under way: a slow endpoint holds up its own deliveries only. With
   * `retainMs`, it also prunes the outbox at once and then once an hour, beside the sends. A failed
   * claim, record or prune goes to `onError` (a failed prune is tried again an hour later).
   */
  start(options?: { intervalMs?: number; onError?: (err: unknown) => void }): void;
  /** Stops the loop and waits for the attempts and the prune under way. */
  stop(): Promise<void>;
}

/**
 * A webhook dispatcher over an outbox: each `runOnce` claims the due deliveries of enabled endpoints
 * under a lease (no other dispatcher, in any process, sends the same delivery while it holds it),
 * POSTs each event as JSON with the Standard Webhooks headers (`webhook-id`: the event's id, the same
 * on every retry, so a receiver de-duplicates; `webhook-timestamp`: unix seconds;
 * `webhook-signature`: `v1,<base64 HMAC-SHA256>` under the endpoint's secret), and records the
 * outcome. Only to public addresses: a host that is, or resolves to, a loopback, private, link-local
 * or metadata address is refused (`refused_target`) unless `allowPrivateNetworks`; on Node every
 * address a name resolves to is checked and the connection goes to one of them. The delivery log
 * records a failure's class (`timeout`, `connection_failed`, `tls_error`, `refused_target`,
 * `http_4xx`...), never the error; `onAttemptFailed` gets the error. Attempts run at once, at most
 * `endpointConcurrency` per endpoint and `concurrency` in all, each within `timeoutMs`.
 * A 2xx is delivered; any other status, a redirect, a network error or a timeout is retried
 * with exponential backoff and full jitter (30 s doubling up to 6 h, for 24 h by default), then
 * `failed`. An endpoint failing without a break for `disableAfterMs` (24 h), or whose delivery gives
 * up, is disabled and
 * `webhook.endpoint_disabled` is published to the outbox (its account's other endpoints get it) and
 * `onEvent`. At least once: a dispatcher that dies mid-send leaves the delivery to be claimed again
 * once its lease ends. Once started, it deletes the events that ended more than `retainMs` (7 days)
 * ago with their deliveries, once an hour (docs/guide/retention.md).
 *
 * @example
 * import { createWebhookDispatcher } from 'keygate/webhooks';
 * const dispatcher = createWebhookDispatcher({ outbox: capabilityOf(store, 'outbox')! });
 * dispatcher.start({ intervalMs: 5_000 });
 * process.on('SIGTERM', () => dispatcher.stop());
 */
export function createWebhookDispatcher(options: WebhookDispatcherOptions): WebhookDispatcher {
  checkOptionNames(options, OPTION_NAMES, 'createWebhookDispatcher');
  const outbox = options?.outbox;
  if (!outbox || typeof outbox.claim !== 'function') {
    throw new InvalidInputError('outbox', "outbox must be an Outbox (a store's outbox capability)");
  }
  checkOptionNames(options.retry, RETRY_OPTION_NAMES, 'createWebhookDispatcher', 'retry');
  const custom = options.fetch;
  if (custom !== undefined && typeof custom !== 'function')
    throw new InvalidInputError('fetch', 'fetch must be a function');
  const resolve = options.lookup;
  if (resolve !== undefined && (typeof resolve !== 'function' || !checksResolvedAddresses)) {
    throw new InvalidInputError('lookup', 'lookup must be a function, and is taken on Node only');
  }
  const allowPrivateNetworks = options.allowPrivateNetworks ?? false;
  if (typeof allowPrivateNetworks !== 'boolean') {
    throw new InvalidInputError('allowPrivateNetworks', 'allowPrivateNetworks must be true or false');
  }
  const clock = options.clock ?? Date.now;
  const random = options.random ?? Math.random;
  const timeoutMs = positive('timeoutMs', options.timeoutMs ?? 10_000);
  const leaseMs = positive('leaseMs', options.leaseMs ?? 60_000);
  if (leaseMs <= timeoutMs) throw new InvalidInputError('leaseMs', 'leaseMs must be more than timeoutMs');
  const batchSize = validWholeNumber('batchSize', options.batchSize ?? 20, 1, 1_000);
  const concurrency = validWholeNumber('concurrency', options.concurrency ?? 20, 1, 1_000);
  const endpointConcurrency = validWholeNumber('endpointConcurrency', options.endpointConcurrency ?? 2, 1, 100);
  const retry: FullRetryPolicy = validRetryPolicy(options.retry);
  const disableAfterMs = positive('disableAfterMs', options.disableAfterMs ?? 24 * 3_600_000);
  const retainMs = validRetainMs(options.retainMs);

  // Attempts in flight (and claims under way, for the room they asked), and each endpoint's lane.
  let active = 0;
  const lanes = new Map<string, { active: number; waiting: (() => void)[] }>();

  async function post(url: URL, headers: Record<string, string>, body: string, signal: AbortSignal): Promise<number> {
    const why = allowPrivateNetworks ? null : refusedHost(url.hostname);
    if (why !== null) throw new RefusedTargetError(url.hostname, why);
    if (!custom) return sendWebhook({ url, headers, body, signal, allowPrivateNetworks, resolve });
    const response = await custom(url.href, { method: 'POST', headers, body, redirect: 'manual', signal });
    await response.body?.cancel().catch(() => {});
    return response.status;
  }

  async function attempt(
    claimed: ClaimedDelivery,
  ): Promise<{ status: number | null; failure: DeliveryFailure | null }> {
    const { event, endpoint, delivery } = claimed;
    const body = JSON.stringify(event);
    const timestamp = Math.floor(clock() / 1000);
    const signature = await signWebhook({ secret: endpoint.secret, id: event.id, timestamp, body });
    const headers = {
      'content-type': 'application/json',
      'user-agent': 'keygate-webhooks',
      'webhook-id': event.id,
      'webhook-timestamp': String(timestamp),
      'webhook-signature': signature,
    };
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), timeoutMs);
    let status: number | null = null;
    let failure: DeliveryFailure | null = null;
    let error: unknown = null;
    try {
      status = await post(new URL(endpoint.url), headers, body, controller.signal);
      if (status < 200 || status >= 300) failure = failureOfStatus(status);
    } catch (err) {
      error = err;
      failure = controller.signal.aborted ? 'timeout' : failureOfError(err);
    } finally {
      clearTimeout(timer);
    }
    if (failure !== null && options.onAttemptFailed) {
      const detail = { deliveryId: delivery.id, endpointId: endpoint.id, accountId: endpoint.accountId };
      try {
        options.onAttemptFailed({ ...detail, failure, statusCode: status, error });
      } catch {
        // The operator's hook never breaks a delivery.
      }
    }
    return { status, failure };
  }

  async function deliver(claimed: ClaimedDelivery): Promise<'delivered' | 'failed' | 'gaveUp'> {
    const { status, failure } = await attempt(claimed);
    const nowMs = clock();
    const base = { deliveryId: claimed.delivery.id, leaseToken: claimed.leaseToken, nowMs, statusCode: status };
    if (failure === null) {
      await outbox.complete(base);
      return 'delivered';
    }
    const retryAtMs = nextAttemptMs(retry, {
      nowMs,
      createdMs: Date.parse(claimed.delivery.createdAt),
      failures: claimed.delivery.attempts + 1,
      random: random(),
    });
    // A delivery that gives up failed every attempt for about a day: its endpoint is disabled with it.
    const outcome = await outbox.fail({
      ...base,
      error: failure,
      retryAtMs,
      disableAfterMs: retryAtMs === null ? 0 : disableAfterMs,
    });
    if (outcome.endpointDisabled) await disabled(outcome.endpointDisabled, nowMs);
    return retryAtMs === null ? 'gaveUp' : 'failed';
  }

  async function disabled(endpoint: WebhookEndpoint, nowMs: number): Promise<void> {
    const event = {
      type: 'webhook.endpoint_disabled' as const,
      keyId: null,
      accountId: endpoint.accountId,
      hint: null,
      at: new Date(nowMs).toISOString(),
      endpointId: endpoint.id,
      url: endpoint.url,
    };
    await outbox.publish(event).catch(() => {});
    emitSafely(options.onEvent, event);
  }

  // Waits for a place in the endpoint's lane; a delivery whose lease would end before its attempt
  // could is left alone (another claim takes it once the lease ends), so it is never sent twice at once.
  async function inLane(
    claimed: ClaimedDelivery,
    claimedAtMs: number,
  ): Promise<'delivered' | 'failed' | 'gaveUp' | 'left'> {
    const id = claimed.endpoint.id;
    const lane = lanes.get(id) ?? { active: 0, waiting: [] };
    lanes.set(id, lane);
    if (lane.active < endpointConcurrency) lane.active++;
    else await new Promise<void>((resume) => lane.waiting.push(resume));
    try {
      if (clock() + timeoutMs >= claimedAtMs + leaseMs) return 'left';
      active++;
      try {
        return await deliver(claimed);
      } finally {
        active--;
      }
    } finally {
      const next = lane.waiting.shift();
      if (next) next();
      else if (--lane.active === 0) lanes.delete(id);
    }
  }

  // Claims what there is room for and starts sending; `done` settles when every outcome is recorded.
  async function claimAndSend(): Promise<{ done: Promise<DispatchReport> }> {
    const room = Math.min(batchSize, concurrency - active);
    if (room <= 0) return { done: Promise.resolve({ claimed: 0, delivered: 0, failed: 0, gaveUp: 0 }) };
    // The room is taken while the claim is under way, so that two runs at once do not both count it free.
    active += room;
    let claimed: ClaimedDelivery[] = [];
    const claimedAtMs = clock();
    try {
      claimed = await outbox.claim({ nowMs: claimedAtMs, leaseMs, limit: room });
    } finally {
      active -= room;
    }
    const sending = claimed.map((c) => inLane(c, claimedAtMs));
    const done = Promise.all(sending).then((outcomes) => {
      const count = (what: string) => outcomes.filter((o) => o === what).length;
      return {
        claimed: claimed.length,
        delivered: count('delivered'),
        failed: count('failed'),
        gaveUp: count('gaveUp'),
      };
    });
    return { done };
  }

  async function runOnce(): Promise<DispatchReport> {
    const { done } = await claimAndSend();
    return done;
  }

  let onLoopError: ((err: unknown) => void) | undefined;

  // Retention: one prune at a time, beside the sends, when an hour has passed by the clock.
  let nextPruneMs = Number.NEGATIVE_INFINITY;
  let pruning: Promise<void> | undefined;
  function pruneWhenDue(): void {
    if (retainMs === false || pruning || clock() < nextPruneMs) return;
    nextPruneMs = clock() + PRUNE_EVERY_MS;
    pruning = outbox
      .prune({ olderThanMs: retainMs })
      .then(
        () => {},
        (err: unknown) => onLoopError?.(err),
      )
      .finally(() => {
        pruning = undefined;
      });
  }

  // The loop does not wait for a run's attempts: the next claim comes `intervalMs` after this one.
  const sendingNow = new Set<Promise<unknown>>();
  const loop = repeating(async () => {
    pruneWhenDue();
    const { done } = await claimAndSend();
    const watched = done.catch((err: unknown) => onLoopError?.(err));
    sendingNow.add(watched);
    void watched.finally(() => sendingNow.delete(watched));
  }, 5_000);

  return {
    runOnce,
    start(startOptions) {
      onLoopError = startOptions?.onError;
      loop.start(startOptions);
    },
    async stop() {
      await loop.stop();
      await Promise.all(sendingNow);
      await pruning;
    },
  };
}

// The `retainMs` option: a whole number of milliseconds >= 1, or false (keep everything).
function validRetainMs(value: unknown): number | false {
  if (value === false) return false;
  const retainMs = value ?? DEFAULT_RETAIN_MS;
  if (typeof retainMs !== 'number' || !Number.isSafeInteger(retainMs) || retainMs < 1) {
    throw new InvalidInputError('retainMs', 'retainMs must be a whole number of milliseconds >= 1, or false');
  }
  return retainMs;
}

function positive(field: string, value: number): number {
  if (typeof value !== 'number' || !(value > 0) || !Number.isFinite(value)) {
    throw new InvalidInputError(field, `${field} must be a number of milliseconds > 0`);
  }
  return value;
}
