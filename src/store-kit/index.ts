/**
 * `keygate/store-kit`: what an author of a key store needs and an application does not. A store
 * implements `WritableKeyStore`, declares what else it offers under {@link CAPABILITIES} (`changes`,
 * `usage` with a `UsageStore`, `deadline`, ...), applies every patch with
 * {@link applyPatch}, announces its writes with {@link ChangeFeed} or {@link ChangeRelay} and
 * {@link changeOf}, and proves itself with `describeKeyStoreContract` from `keygate/testing`; beside it,
 * a `DashboardStore` serves the dashboard and proves itself with `describeDashboardStoreContract`. A
 * `CreditLedger` checks its arguments with {@link validTopUpArgs}, {@link validHoldArgs},
 * {@link validSettleArgs} and {@link validEntriesArgs}, bounds each call with {@link withLedgerDeadline},
 * and proves itself with `describeCreditLedgerContract`. An `AuditLog` (a key store's `audit`
 * capability) checks every entry with {@link validAuditEntry} (which keeps secrets out), ids them
 * with {@link auditId}, and proves itself with `describeAuditLogContract`. The error classes a store throws (`KeyConflictError`, `KeyNotFoundError`, `KeyStoreUnavailableError`,
 * ...) come from `keygate` itself, so an application's `instanceof` checks hold for them.
 *
 * @example
 * import { applyPatch, changeOf, ChangeRelay, type WritableKeyStore } from 'keygate/store-kit';
 *
 * @packageDocumentation
 */

// For authors of audit logs over other backends (keygate/postgres and keygate/redis use them).
export { AUDIT_ACTIONS, freezeAuditEntry, validAuditEntry, validAuditQuery } from '../audit/entry.js';
export { auditId } from '../audit/id.js';
// For authors of credit ledgers over other backends (keygate/postgres and keygate/redis use them).
export { amountOverflow, amountOverHold, checkCreditAmount } from '../credits/amount.js';
export type { HoldArgs, TopUpArgs } from '../credits/arguments.js';
export {
  DEFAULT_HOLD_TTL_MS,
  DEFAULT_LEDGER_TIMEOUT_MS,
  validCreditAccount,
  validEntriesArgs,
  validHoldArgs,
  validHoldId,
  validSettleArgs,
  validTopUpArgs,
} from '../credits/arguments.js';
export { withLedgerDeadline } from '../credits/deadline.js';
export { toPublicKey } from '../key/compiled-key.js';
// For authors of outboxes over other backends (keygate/postgres and keygate/redis use them).
export {
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
} from '../outbox/endpoint.js';
export { outboxEventOf, takesEvent } from '../outbox/event.js';
// For authors of rate limiters over other backends (keygate/redis and keygate/postgres use them).
export { withLimiterDeadline } from '../rate-limit/deadline.js';
export type { TakeArgs } from '../rate-limit/lease-types.js';
export { grantOf, sameWindow, validGiveBackArgs, validTakeArgs } from '../rate-limit/lease-types.js';
export type { ConsumeArgs } from '../rate-limit/policy.js';
export { validConsumeArgs } from '../rate-limit/policy.js';
export { quote } from '../redact/describe.js';
// For messages that carry what a driver or a user echoed back: a raw key never reaches an error.
export { redactKeys } from '../redact/keys.js';
export { applyPatch, freezeRecord } from '../store/apply-patch.js';
export { ChangeFeed, changeOf } from '../store/change-feed.js';
export { ChangeRelay, parseChange } from '../store/change-relay.js';
// For stores and limiters that report to OpenTelemetry (see the `telemetry` option).
export type { CreditOperation, ObservedResult, StoreLookupResult, Telemetry } from '../telemetry/telemetry.js';
export { createTelemetry, METRICS, observedLookup } from '../telemetry/telemetry.js';
export type { AttemptWindow, SharedAttemptCounter, SharedReservation } from '../throttle/failed-attempts.js';
// The record and store contracts also live in `keygate` (applications name them); repeated here so
// that a store needs one import.
export type {
  ApiKeyRecord,
  KeyChange,
  KeyChangeEvent,
  KeyPatch,
  KeyResync,
  KeyStore,
  OutboxEvent,
  WritableKeyStore,
  WriteCondition,
  WriteOptions,
} from '../types.js';
export { mergeUsage } from '../usage/merge.js';
export { summarizeUsage } from '../usage/report.js';
export { checkOptionNames, closestName } from '../validate/options.js';
export { validTimeoutMs } from '../validate/timeout.js';
export type { AuditEntry, AuditEntryInput, AuditLog, AuditQuery } from '../vocabulary/audit-log.js';
export type {
  Capabilities,
  Capable,
  ChangeSource,
  Deadline,
  Degradable,
  ImmediateLedger,
  ImmediateLimiter,
  SynchronousLedger,
  ViewSource,
  Wrapper,
} from '../vocabulary/capabilities.js';
// `capabilityOf`, which reads them, is in `keygate`: applications read a store's outbox and audit log with it.
export { CAPABILITIES } from '../vocabulary/capabilities.js';
export type {
  CreditBalance,
  CreditEntry,
  CreditLedger,
  CreditReconciliation,
  EntriesOptions,
  HoldOptions,
  HoldResult,
  PruneHoldsOptions,
  PruneHoldsResult,
  SettleResult,
  TopUpOptions,
} from '../vocabulary/credit-ledger.js';
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
} from '../vocabulary/outbox.js';
export type { LeasableRateLimiter, RateLimitLease, TakeRequest } from '../vocabulary/rate-limiter.js';
export type { KeyActivity, UsageBatch, UsageCount, UsageOutcome, UsageStore } from '../vocabulary/usage-store.js';
export { utcDay } from '../vocabulary/usage-store.js';
// The shells every shared limiter and ledger extends: argument checks, deadline, capabilities.
export { BackendCreditLedger } from './backend-credit-ledger.js';
export { BackendRateLimiter } from './backend-rate-limiter.js';
// The dashboard's own store (keygate/dashboard takes one), and helpers for backends that page or add up in memory.
export { dailyTotals } from './daily-totals.js';
export type { DailyTotal, DashboardStore, KeyPage, KeyPageQuery } from './dashboard-store.js';
export { pageOfKeys } from './key-page.js';
