export type {
  InputIssue,
  InputIssueReason,
  InvalidInputDetails,
  KeygateErrorCode,
  KeygateErrorDetails,
} from '#errors';
export {
  CreditLedgerUnavailableError,
  InvalidInputError,
  KeyConflictError,
  KeygateError,
  KeyInUseError,
  KeyNotFoundError,
  KeyRevokedError,
  KeyStoreUnavailableError,
  RateLimiterUnavailableError,
  StoreLockedError,
  UnsupportedError,
} from '#errors';
export type {
  AuthenticateOptions,
  AuthFailure,
  AuthRequest,
  AuthResult,
  AuthSuccess,
  CreditOptions,
  HeldCredits,
  RateLimitOptions,
} from './auth/authenticate.js';
export { authenticate, authenticateEager } from './auth/authenticate.js';
export type { KeySource } from './auth/read-key.js';
export type { CreditLeaseOptions } from './credits/leased.js';
export { LeasedCreditLedger } from './credits/leased.js';
export type { MemoryCreditLedgerOptions } from './credits/memory.js';
export { MemoryCreditLedger } from './credits/memory.js';
export type { EventHook, KeygateEvent, KeygateEventType, LeakAction } from './events.js';
export type { GenerateKeyOptions, ParsedKey } from './key/format.js';
export { generateKey, isWellFormedKey, keyHint, parseKey } from './key/format.js';
export { hashKey } from './key/hash.js';
export type {
  AuditRecordInput,
  CreatedKey,
  CreateKeyInput,
  ImportFromDigest,
  ImportFromSecret,
  ImportKeyFields,
  ImportKeyInput,
  InputCheck,
  KeyCheckOptions,
  KeyDigest,
  KeyManagerOptions,
  ManagedKey,
  RevokeOptions,
  RotateKeyOptions,
  RotationStatus,
  SuspendKeyOptions,
  UpdateKeyInput,
  ValidKeyInput,
} from './manager/key-manager.js';
export { DEFAULT_QUIET_FOR_MS, KeyManager } from './manager/key-manager.js';
export type { LeasedRateLimiterOptions } from './rate-limit/leased.js';
export { LeasedRateLimiter } from './rate-limit/leased.js';
export type { MemoryRateLimiterOptions } from './rate-limit/memory.js';
export { MemoryRateLimiter } from './rate-limit/memory.js';
export { LeasableMemoryRateLimiter } from './rate-limit/memory-leases.js';
export type { CachedKeyStoreOptions } from './store/cached.js';
export { CachedKeyStore } from './store/cached.js';
export { MemoryKeyStore } from './store/memory.js';
export type {
  TelemetryAttributes,
  TelemetryCounter,
  TelemetryHistogram,
  TelemetryInstrumentOptions,
  TelemetryMeter,
  TelemetrySpan,
  TelemetryTracer,
} from './telemetry/shapes.js';
export type { TelemetryOptions } from './telemetry/telemetry.js';
export type {
  AttemptReservation,
  AttemptThrottle,
  FailedAttemptThrottleOptions,
} from './throttle/failed-attempts.js';
export { FailedAttemptThrottle } from './throttle/failed-attempts.js';
export type {
  ApiKeyRecord,
  KeyMetadata,
  KeyMode,
  KeyRateLimit,
  KeyStatus,
  KeyStore,
  NamedRateLimit,
  OutboxEvent,
  PublicKey,
  RateLimit,
  WritableKeyStore,
} from './types.js';
export type { SpikeOptions, UsageRecorderOptions } from './usage/recorder.js';
export { UsageRecorder } from './usage/recorder.js';
export type {
  AuditAction,
  AuditActor,
  AuditChanges,
  AuditContext,
  AuditEntry,
  AuditEntryInput,
  AuditLog,
  AuditQuery,
} from './vocabulary/audit-log.js';
export { capabilityOf } from './vocabulary/capabilities.js';
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
} from './vocabulary/credit-ledger.js';
export type { DenialCode } from './vocabulary/denials.js';
export { DENIALS } from './vocabulary/denials.js';
// The outbox as an application reads and manages it; what only a backend's outbox and the dispatcher
// exchange (`ClaimArgs`, `ClaimedDelivery`, `AttemptResult`, ...) is in `keygate/store-kit`.
export type {
  CreatedWebhookEndpoint,
  DeliveryQuery,
  Outbox,
  OutboxEventInput,
  WebhookDelivery,
  WebhookEndpoint,
  WebhookEndpointChanges,
  WebhookEndpointInput,
  WebhookEndpointOptions,
  WebhookEndpoints,
} from './vocabulary/outbox.js';
export type {
  RateLimitDecision,
  RateLimiter,
  RateLimitPolicyState,
  RateLimitState,
} from './vocabulary/rate-limiter.js';
export type { UsageReport } from './vocabulary/usage-store.js';
