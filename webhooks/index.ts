/**
 * `keygate/webhooks`: events that leave the process. A backend's outbox (`capabilityOf(store,
 * 'outbox')`) keeps every key event with the write that caused it; {@link createWebhookDispatcher}
 * sends them to each account's endpoints, signed the Standard Webhooks way; a receiver checks them
 * with {@link verifyWebhook}. Web APIs only (fetch, Web Crypto): it runs on Node, Workers, Deno and Bun.
 *
 * @example
 * import { createWebhookDispatcher, verifyWebhook } from 'keygate/webhooks';
 *
 * @packageDocumentation
 */

export { InvalidSignatureError } from '#errors';
export { MemoryOutbox } from '../src/outbox/memory.js';
export type { OutboxEvent } from '../src/types.js';
export type {
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
} from '../src/vocabulary/outbox.js';
export { DEFAULT_RETRY, type FullRetryPolicy, type RetryPolicy } from './backoff.js';
export {
  createWebhookDispatcher,
  type DispatchReport,
  type WebhookDispatcher,
  type WebhookDispatcherOptions,
} from './dispatcher.js';
export { type OutboxEventHooks, type OutboxEventsOptions, outboxEvents } from './forward.js';
export {
  type KeyNotifications,
  type KeyNotificationsOptions,
  type KeyNotificationsReport,
  keyNotifications,
} from './notifications.js';
export { signWebhook } from './sign.js';
export { stableEventId } from './stable-id.js';
export { type VerifyWebhookArgs, verifyWebhook, type WebhookHeaders } from './verify.js';
