// The API reference (`npm run docs:api`, TypeDoc; part of the docs site) is generated from JSDoc, so every export of every entry
// point in package.json `exports` must carry it: a description and an @example. Reads each entry
// point's sources through the `source` export condition, as the docs build does.
import { describe, expect, it } from 'vitest';
import { ENTRIES, exportsOf } from './support/entry-exports.js';

/**
 * Types that were exported without an @example before the rule covered types. The list only
 * shrinks: a new export needs its example, and a name leaves the list once its example is written.
 */
const TYPES_WITHOUT_EXAMPLE_YET = new Set([
  'AccountPanelEntry',
  'ApiKeyRecord',
  'AttemptThrottle',
  'AttemptWindow',
  'AuthFailure',
  'AuthRequest',
  'AuthResult',
  'AuthSuccess',
  'AuthenticateOptions',
  'CachedKeyStoreOptions',
  'ContractAssertion',
  'ContractOptions',
  'ContractTestApi',
  'CreateKeyInput',
  'CreatedKey',
  'Dashboard',
  'DashboardOptions',
  'DenialCode',
  'DenialResponse',
  'EventHook',
  'FailedAttemptThrottleOptions',
  'FastifyLike',
  'FastifyReplyLike',
  'FastifyRequestLike',
  'FetchHandler',
  'GenerateKeyOptions',
  'KeyActivity',
  'KeyChange',
  'KeyManagerOptions',
  'KeyMetadata',
  'KeyMode',
  'KeyPatch',
  'KeyStatus',
  'KeygateErrorCode',
  'KeygateErrorDetails',
  'KeygateEvent',
  'KeygateEventType',
  'ManagedKey',
  'NodeRequestFacts',
  'NodeRequestLike',
  'NodeResponseLike',
  'PGliteLike',
  'ParsedKey',
  'PostgresKeyStoreOptions',
  'PublicKey',
  'RateLimitSetting',
  'RedisAttemptCounterOptions',
  'RedisClientLike',
  'RedisCommandClient',
  'RedisKeyStoreOptions',
  'RedisSubscriberLike',
  'ResolvedOptions',
  'RotationStatus',
  'SharedAttemptCounter',
  'SignInLinkOptions',
  'SpikeOptions',
  'StoreFixture',
  'UpdateKeyInput',
  'UsageBatch',
  'UsageCount',
  'UsageOutcome',
  'UsageRecorderOptions',
  'UsageReport',
  'UsageStore',
  'WritableKeyStore',
]);

describe.each(ENTRIES)('%s', (entry) => {
  const docs = exportsOf(entry);

  it('exports something', () => {
    expect(docs.length).toBeGreaterThan(0);
  });

  it('describes every export in JSDoc', () => {
    expect(docs.filter((d) => !d.described).map((d) => d.name)).toEqual([]);
  });

  it('gives every export an @example (functions, classes and constants without exception)', () => {
    const missing = docs.filter((d) => !d.example && !(d.kind === 'type' && TYPES_WITHOUT_EXAMPLE_YET.has(d.name)));
    expect(missing.map((d) => `${d.kind} ${d.name}`)).toEqual([]);
  });
});

it('lists only types that still lack an @example (remove a name once its example is written)', () => {
  const stillMissing = new Set(
    ENTRIES.flatMap(([entry]) => exportsOf(entry).filter((d) => d.kind === 'type' && !d.example)).map((d) => d.name),
  );
  expect([...TYPES_WITHOUT_EXAMPLE_YET].filter((name) => !stillMissing.has(name))).toEqual([]);
});
