// The export lists of `keygate` and `keygate/store-kit`, written out. Every name here is a
// compatibility promise: adding one (or moving one between entry points) means editing this file,
// on purpose, together with CHANGELOG.md. The root carries what an application author uses; what
// only a store author needs is in `keygate/store-kit`; the rest is internal.
import * as keygate from 'keygate';
import * as drizzleEntry from 'keygate/drizzle';
import * as leaks from 'keygate/leaks';
import * as nestjs from 'keygate/nestjs';
import * as storeKit from 'keygate/store-kit';
import { describe, expect, it } from 'vitest';
import { exportsOf } from './support/entry-exports.js';

/** The most values the root may export (a small root: what an application author uses). */
const ROOT_VALUE_LIMIT = 31;

/** Room kept in the root for values already promised but not yet built. */
const ROOT_SLOTS_HELD = 0;

const ROOT_VALUES = [
  'CachedKeyStore',
  'CreditLedgerUnavailableError',
  'DEFAULT_QUIET_FOR_MS',
  'DENIALS',
  'FailedAttemptThrottle',
  'InvalidInputError',
  'KeyConflictError',
  'KeyInUseError',
  'KeyManager',
  'KeyNotFoundError',
  'KeyRevokedError',
  'KeyStoreUnavailableError',
  'KeygateError',
  'LeasableMemoryRateLimiter',
  'LeasedCreditLedger',
  'LeasedRateLimiter',
  'MemoryCreditLedger',
  'MemoryKeyStore',
  'MemoryRateLimiter',
  'RateLimiterUnavailableError',
  'StoreLockedError',
  'UnsupportedError',
  'UsageRecorder',
  'authenticate',
  'authenticateEager',
  'capabilityOf',
  'generateKey',
  'hashKey',
  'isWellFormedKey',
  'keyHint',
  'parseKey',
];

const ROOT_TYPES = [
  'ApiKeyRecord',
  'AttemptReservation',
  'AttemptThrottle',
  'AuditAction',
  'AuditActor',
  'AuditChanges',
  'AuditContext',
  'AuditEntry',
  'AuditEntryInput',
  'AuditLog',
  'AuditQuery',
  'AuditRecordInput',
  'AuthFailure',
  'AuthRequest',
  'AuthResult',
  'AuthSuccess',
  'AuthenticateOptions',
  'CachedKeyStoreOptions',
  'CreateKeyInput',
  'CreatedKey',
  'CreatedWebhookEndpoint',
  'CreditBalance',
  'CreditEntry',
  'CreditLeaseOptions',
  'CreditLedger',
  'CreditOptions',
  'CreditReconciliation',
  'DeliveryQuery',
  'DenialCode',
  'EntriesOptions',
  'EventHook',
  'FailedAttemptThrottleOptions',
  'GenerateKeyOptions',
  'HeldCredits',
  'HoldOptions',
  'HoldResult',
  'ImportFromDigest',
  'ImportFromSecret',
  'ImportKeyFields',
  'ImportKeyInput',
  'InputCheck',
  'InputIssue',
  'InputIssueReason',
  'InvalidInputDetails',
  'KeyCheckOptions',
  'KeyDigest',
  'KeyManagerOptions',
  'KeyMetadata',
  'KeyMode',
  'KeyRateLimit',
  'KeySource',
  'KeyStatus',
  'KeyStore',
  'KeygateErrorCode',
  'KeygateErrorDetails',
  'KeygateEvent',
  'KeygateEventType',
  'LeakAction',
  'LeasedRateLimiterOptions',
  'ManagedKey',
  'MemoryCreditLedgerOptions',
  'MemoryRateLimiterOptions',
  'NamedRateLimit',
  'Outbox',
  'OutboxEvent',
  'OutboxEventInput',
  'ParsedKey',
  'PruneArgs',
  'PruneResult',
  'PublicKey',
  'RateLimit',
  'RateLimitDecision',
  'RateLimitOptions',
  'RateLimitPolicyState',
  'RateLimitState',
  'RateLimiter',
  'RevokeOptions',
  'RotateKeyOptions',
  'RotationStatus',
  'SettleResult',
  'SpikeOptions',
  'SuspendKeyOptions',
  'TelemetryAttributes',
  'TelemetryCounter',
  'TelemetryHistogram',
  'TelemetryInstrumentOptions',
  'TelemetryMeter',
  'TelemetryOptions',
  'TelemetrySpan',
  'TelemetryTracer',
  'TopUpOptions',
  'UpdateKeyInput',
  'UsageRecorderOptions',
  'UsageReport',
  'ValidKeyInput',
  'WebhookDelivery',
  'WebhookEndpoint',
  'WebhookEndpointChanges',
  'WebhookEndpointInput',
  'WebhookEndpointOptions',
  'WebhookEndpoints',
  'WritableKeyStore',
];

const STORE_KIT_VALUES = [
  'AUDIT_ACTIONS',
  'BackendCreditLedger',
  'BackendRateLimiter',
  'CAPABILITIES',
  'ChangeFeed',
  'ChangeRelay',
  'DEFAULT_HOLD_TTL_MS',
  'DEFAULT_LEDGER_TIMEOUT_MS',
  'METRICS',
  'amountOverHold',
  'amountOverflow',
  'applyPatch',
  'auditId',
  'changeOf',
  'checkCreditAmount',
  'checkOptionNames',
  'closestName',
  'createTelemetry',
  'dailyTotals',
  'endpointView',
  'freezeAuditEntry',
  'freezeDelivery',
  'freezeRecord',
  'grantOf',
  'isoOrNull',
  'leaseToken',
  'mergeUsage',
  'newWebhookEndpoint',
  'observedLookup',
  'outboxEventOf',
  'pageOfKeys',
  'parseChange',
  'pruneCutoffMs',
  'quote',
  'redactKeys',
  'sameWindow',
  'summarizeUsage',
  'takesEvent',
  'toPublicKey',
  'utcDay',
  'validAuditEntries',
  'validAuditEntry',
  'validAuditQuery',
  'validClaimArgs',
  'validConsumeArgs',
  'validCreditAccount',
  'validDeliveryLimit',
  'validEndpointChanges',
  'validEntriesArgs',
  'validGiveBackArgs',
  'validHoldArgs',
  'validHoldId',
  'validPruneArgs',
  'validSettleArgs',
  'validTakeArgs',
  'validTimeoutMs',
  'validTopUpArgs',
  'validWebhookId',
  'withLedgerDeadline',
  'withLimiterDeadline',
];

const STORE_KIT_TYPES = [
  'ApiKeyRecord',
  'AttemptResult',
  'AttemptWindow',
  'AuditEntry',
  'AuditEntryInput',
  'AuditLog',
  'AuditQuery',
  'Capabilities',
  'Capable',
  'ChangeSource',
  'ClaimArgs',
  'ClaimedDelivery',
  'ConsumeArgs',
  'CreatedWebhookEndpoint',
  'CreditBalance',
  'CreditEntry',
  'CreditLedger',
  'CreditOperation',
  'CreditReconciliation',
  'DailyTotal',
  'DashboardStore',
  'Deadline',
  'Degradable',
  'DeliveryQuery',
  'EntriesOptions',
  'FailOutcome',
  'FailedAttempt',
  'HoldArgs',
  'HoldOptions',
  'HoldResult',
  'ImmediateLedger',
  'ImmediateLimiter',
  'KeyActivity',
  'KeyChange',
  'KeyChangeEvent',
  'KeyPage',
  'KeyPageQuery',
  'KeyPatch',
  'KeyResync',
  'KeyStore',
  'LeasableRateLimiter',
  'ObservedResult',
  'Outbox',
  'OutboxEvent',
  'OutboxEventInput',
  'PruneArgs',
  'PruneResult',
  'RateLimitLease',
  'SettleResult',
  'SharedAttemptCounter',
  'SharedReservation',
  'StoreLookupResult',
  'StoredWebhookEndpoint',
  'SynchronousLedger',
  'TakeArgs',
  'TakeRequest',
  'Telemetry',
  'TopUpArgs',
  'TopUpOptions',
  'UsageBatch',
  'UsageCount',
  'UsageOutcome',
  'UsageStore',
  'ViewSource',
  'WebhookDelivery',
  'WebhookEndpoint',
  'WebhookEndpointChanges',
  'WebhookEndpointInput',
  'WebhookEndpointOptions',
  'WebhookEndpoints',
  'Wrapper',
  'WritableKeyStore',
  'WriteCondition',
  'WriteOptions',
];

const LEAKS_VALUES = [
  'GITHUB_ACTOR',
  'GITHUB_SECRET_SCANNING_KEYS_URL',
  'derToRawSignature',
  'githubSecretScanning',
  'secretScanningPattern',
];

const NESTJS_VALUES = [
  'ApiKey',
  'ApiKeyDeniedException',
  'ApiKeyGuard',
  'KeygateModule',
  'Public',
  'RequirePermissions',
];

const NESTJS_TYPES = [
  'AuthFailure',
  'HeldCredits',
  'KeygateModuleAsyncOptions',
  'KeygateModuleOptions',
  'KeygateRequest',
  'PublicKey',
];

const LEAKS_TYPES = [
  'FetchFunction',
  'GithubSecretScanningOptions',
  'LeakPolicy',
  'LeakProblemCode',
  'LeakRotation',
  'ReportedToken',
];

const sorted = (names: readonly string[]) => [...names].sort();
const typesOf = (entry: string) =>
  sorted(
    exportsOf(entry)
      .filter((e) => e.kind === 'type')
      .map((e) => e.name),
  );

describe('keygate', () => {
  it('exports exactly the listed values', () => {
    expect(sorted(Object.keys(keygate))).toEqual(sorted(ROOT_VALUES));
  });

  it(`keeps its values to ${ROOT_VALUE_LIMIT}, with room for the ones announced`, () => {
    expect(ROOT_VALUES.length + ROOT_SLOTS_HELD).toBeLessThanOrEqual(ROOT_VALUE_LIMIT);
  });

  it('exports exactly the listed types', () => {
    expect(typesOf('keygate')).toEqual(sorted(ROOT_TYPES));
  });
});

describe('keygate/store-kit', () => {
  it('exports exactly the listed values', () => {
    expect(sorted(Object.keys(storeKit))).toEqual(sorted(STORE_KIT_VALUES));
  });

  it('exports exactly the listed types', () => {
    expect(typesOf('keygate/store-kit')).toEqual(sorted(STORE_KIT_TYPES));
  });

  it('shares no value with the root: each name has one home', () => {
    expect(Object.keys(storeKit).filter((name) => name in keygate)).toEqual([]);
  });

  it("throws the root's error classes, so an application's instanceof holds", async () => {
    const store = new keygate.MemoryKeyStore();
    const keys = new keygate.KeyManager({ store });
    const { secret, key } = await keys.create({ accountId: 'acct_1', name: 'ci', mode: 'test' });
    await keys.revoke(key.id);
    const revoked = await store.findByHash(await keygate.hashKey(secret));
    expect(revoked?.status).toBe('revoked');
    const thrown = catching(() =>
      storeKit.applyPatch(revoked as storeKit.ApiKeyRecord, { name: 'renamed', updatedAt: new Date().toISOString() }),
    );
    expect(thrown).toBeInstanceOf(keygate.KeygateError);
    expect(thrown).toMatchObject({ code: 'key_revoked', keyId: key.id });
  });
});

describe('keygate/leaks', () => {
  it('exports exactly the listed values', () => {
    expect(sorted(Object.keys(leaks))).toEqual(sorted(LEAKS_VALUES));
  });

  it('exports exactly the listed types', () => {
    expect(typesOf('keygate/leaks')).toEqual(sorted(LEAKS_TYPES));
  });
});

describe('keygate/nestjs', () => {
  it('exports exactly the listed values', () => {
    expect(sorted(Object.keys(nestjs))).toEqual(sorted(NESTJS_VALUES));
  });

  it('exports exactly the listed types', () => {
    expect(typesOf('keygate/nestjs')).toEqual(sorted(NESTJS_TYPES));
  });
});

const DRIZZLE_VALUES = [
  'drizzleMysqlStores',
  'drizzlePgStores',
  'drizzleSqliteStores',
  'keygateMysqlMigrationSql',
  'keygateMysqlTables',
  'keygatePgMigrationSql',
  'keygatePgTables',
  'keygateSqliteMigrationSql',
  'keygateSqliteTables',
];

const DRIZZLE_TYPES = [
  'DrizzleMysqlStores',
  'DrizzleMysqlStoresOptions',
  'DrizzlePgStores',
  'DrizzlePgStoresOptions',
  'DrizzleSqliteStores',
  'DrizzleSqliteStoresOptions',
  'KeygateMysqlMigrationSqlOptions',
  'KeygateMysqlTables',
  'KeygateMysqlTablesOptions',
  'KeygatePgMigrationSqlOptions',
  'KeygatePgTables',
  'KeygatePgTablesOptions',
  'KeygateSqliteMigrationSqlOptions',
  'KeygateSqliteTables',
];

describe('keygate/drizzle', () => {
  it('exports exactly the listed values', () => {
    expect(sorted(Object.keys(drizzleEntry))).toEqual(sorted(DRIZZLE_VALUES));
  });

  it('exports exactly the listed types', () => {
    expect(typesOf('keygate/drizzle')).toEqual(sorted(DRIZZLE_TYPES));
  });
});

function catching(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  throw new Error('expected a throw');
}

describe('keygate/webhooks', () => {
  it('exports exactly the listed values', async () => {
    const webhooks = await import('keygate/webhooks');
    expect(sorted(Object.keys(webhooks))).toEqual(
      sorted([
        'DEFAULT_RETRY',
        'InvalidSignatureError',
        'MemoryOutbox',
        'createWebhookDispatcher',
        'keyNotifications',
        'outboxEvents',
        'signWebhook',
        'stableEventId',
        'verifyWebhook',
      ]),
    );
  });

  it("throws an error class that extends the root's KeygateError", async () => {
    const { InvalidSignatureError } = await import('keygate/webhooks');
    expect(new InvalidSignatureError('bad_signature', 'no')).toBeInstanceOf(keygate.KeygateError);
  });
});
