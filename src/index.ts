export type {
  AuthenticateOptions,
  AuthFailure,
  AuthRequest,
  AuthResult,
  AuthSuccess,
  ResolvedOptions,
} from './auth/authenticate.js';
export { authenticate, authenticateEager, resolveAuthOptions } from './auth/authenticate.js';
export { toPublicKey } from './auth/compiled-key.js';
export type { DenialCode } from './auth/denials.js';
export { DENIALS } from './auth/denials.js';
export type { HeaderSource } from './auth/read-header.js';
export { readHeader } from './auth/read-header.js';
export type { KeygateErrorCode, KeygateErrorDetails } from './errors.js';
export {
  InvalidInputError,
  KeyConflictError,
  KeygateError,
  KeyInUseError,
  KeyNotFoundError,
  KeyRevokedError,
  KeyStoreUnavailableError,
  quote,
  RateLimiterUnavailableError,
  StoreLockedError,
  UnsupportedError,
} from './errors.js';
export type { EventHook, KeygateEvent, KeygateEventType } from './events.js';
export { emitSafely } from './events.js';
export type { DenialResponderOptions, DenialResponse } from './http/problem.js';
export { createDenialResponder } from './http/problem.js';
export type { ParsedEntry } from './ip/allow-list.js';
export { CompiledAllowList, compileAllowList, normalizeAllowList, parseAllowListEntry } from './ip/allow-list.js';
export type { GenerateKeyOptions, ParsedKey } from './key/format.js';
export { generateKey, isWellFormedKey, keyHint, parseKey } from './key/format.js';
export { hashKey } from './key/hash.js';
export type {
  CreatedKey,
  CreateKeyInput,
  KeyManagerOptions,
  ManagedKey,
  RotationStatus,
  UpdateKeyInput,
} from './manager/key-manager.js';
export { DEFAULT_QUIET_PERIOD_MS, KeyManager } from './manager/key-manager.js';
export { applyPatch, freezeRecord } from './store/apply-patch.js';
export type { CachedKeyStoreOptions } from './store/cached.js';
export { CachedKeyStore } from './store/cached.js';
export { ChangeFeed, changeOf } from './store/change-feed.js';
export { ChangeRelay, parseChange } from './store/change-relay.js';
export { MemoryKeyStore } from './store/memory.js';
export type { ObservedResult, StoreLookupResult, Telemetry, TelemetryOptions } from './telemetry/telemetry.js';
export { createTelemetry, METRICS } from './telemetry/telemetry.js';
export { clientBucket } from './throttle/client-bucket.js';
export type {
  AttemptThrottle,
  AttemptWindow,
  FailedAttemptThrottleOptions,
  SharedAttemptCounter,
} from './throttle/failed-attempts.js';
export { FailedAttemptThrottle } from './throttle/failed-attempts.js';
export type {
  ApiKeyRecord,
  KeyChange,
  KeyMetadata,
  KeyMode,
  KeyPatch,
  KeyStatus,
  KeyStore,
  PublicKey,
  WritableKeyStore,
} from './types.js';
export { mergeUsage } from './usage/merge.js';
export type { SpikeOptions, UsageRecorderOptions } from './usage/recorder.js';
export { UsageRecorder } from './usage/recorder.js';
export { summarizeUsage } from './usage/report.js';
export type { KeyActivity, UsageBatch, UsageCount, UsageOutcome, UsageReport, UsageStore } from './usage/types.js';
export { isUsageStore, utcDay } from './usage/types.js';
