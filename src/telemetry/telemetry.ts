import { InvalidInputError } from '#errors';
import { checkOptionNames } from '../validate/options.js';
import type {
  TelemetryAttributes as Attributes,
  TelemetryCounter as Counter,
  TelemetryHistogram as Histogram,
  TelemetryMeter as Meter,
  TelemetrySpan as Span,
  TelemetryTracer as Tracer,
} from './shapes.js';

/**
 * Where keygate reports what it does: an OpenTelemetry `Meter` and/or `Tracer` from
 * `@opentelemetry/api` (an optional peer; keygate itself never loads it). `keygate/otel`'s
 * `globalTelemetry()` builds one from the global providers. Absent: no instrument is created and the
 * request path does no telemetry work at all.
 *
 * @example
 * import { metrics, trace } from '@opentelemetry/api';
 * const telemetry = { meter: metrics.getMeter('keygate'), tracer: trace.getTracer('keygate') };
 * authenticate(request, store, { telemetry });
 */
export interface TelemetryOptions {
  /** Records the `keygate.*` metrics. Default: none (no metrics). */
  meter?: Meter;
  /** Records a `keygate.store.lookup` span around each lookup that reaches the store. Default: none. */
  tracer?: Tracer;
  /**
   * Per-key and per-client attributes, off by default: each multiplies the number of time series
   * (cardinality) and puts identifying data into your monitoring. `keyId` adds `keygate.key.id`,
   * `hint` adds `keygate.key.hint`, `address` adds `client.address` to `keygate.auth.*` metrics;
   * `accountId` adds `keygate.account.id` to `keygate.credits.operations`. Default: all `false`.
   */
  attributes?: { keyId?: boolean; hint?: boolean; address?: boolean; accountId?: boolean };
}

// The members of TelemetryOptions and of its `attributes`: any other is refused (`unknown_option`).
const TELEMETRY_NAMES = ['meter', 'tracer', 'attributes'];
const TELEMETRY_ATTRIBUTE_NAMES = ['keyId', 'hint', 'address', 'accountId'];

/**
 * The outcome of a lookup that reached the store, as the `keygate.store.result` attribute.
 *
 * @example
 * const done = telemetry.lookup('postgres'); done('found' satisfies StoreLookupResult);
 */
export type StoreLookupResult = 'found' | 'not_found' | 'error' | 'timeout';

/**
 * The metric names keygate records, for dashboards and alerts.
 *
 * @example
 * // PromQL (the Prometheus exporter writes dots as underscores and adds _total to counters):
 * // sum by (keygate_auth_code) (rate(keygate_auth_requests_total{keygate_auth_outcome="denied"}[5m]))
 * METRICS.requests; // 'keygate.auth.requests'
 */
export const METRICS = {
  /** Counter of authenticated requests by `keygate.auth.outcome`, `keygate.auth.code` and `keygate.key.mode`. */
  requests: 'keygate.auth.requests',
  /** Histogram of the time `authenticate` took, in seconds, by `keygate.auth.outcome`. */
  duration: 'keygate.auth.duration',
  /** Counter of lookups that reached the store, by `keygate.store.result`. */
  storeLookups: 'keygate.store.lookups',
  /** Histogram of the time a store lookup took, in seconds, by `keygate.store.result`. */
  storeDuration: 'keygate.store.lookup.duration',
  /** Counter of `CachedKeyStore` lookups by `keygate.cache.result` (`hit`, `negative_hit`, `miss`). */
  cache: 'keygate.cache.lookups',
  /** Counter of rate-limit decisions by `keygate.ratelimit.allowed` and `keygate.ratelimit.degraded`. */
  rateLimit: 'keygate.ratelimit.decisions',
  /** Histogram of how old the oldest count of a usage flush was when it was written, in seconds. */
  flushLag: 'keygate.usage.flush.lag',
  /** Counter of usage flushes that failed (their counts are kept and retried). */
  flushFailures: 'keygate.usage.flush.failures',
  /**
   * Counter of credit-ledger operations by `keygate.credits.operation`: `hold`, `refused` (a 402),
   * `settle`, `release`, `lapse` (a settle that found its hold lapsed) or `error` (then
   * `keygate.credits.step` says which call: `hold`, `settle` or `release`).
   */
  credits: 'keygate.credits.operations',
} as const;

/**
 * What an authentication outcome looks like to telemetry; an `AuthResult` fits.
 *
 * @example
 * telemetry.auth(result satisfies ObservedResult, 0.0004);
 */
export interface ObservedResult {
  readonly ok: boolean;
  readonly code?: string;
  readonly key?: { readonly id: string; readonly hint: string; readonly mode: string } | undefined;
}

/**
 * The instruments keygate records into, built once from {@link TelemetryOptions}. Components keep
 * one and call it on their path; `createTelemetry` returns `undefined` when nothing is configured,
 * so an unconfigured component pays one `undefined` check.
 *
 * @example
 * const telemetry: Telemetry | undefined = createTelemetry(options.telemetry);
 * telemetry?.cache('hit');
 */
export interface Telemetry {
  /** Records one authentication outcome and how long it took (seconds). */
  auth(result: ObservedResult, seconds: number, address?: string | null): void;
  /** Records a cache answer: `hit`, `negative_hit` (a remembered unknown digest) or `miss`. */
  cache(result: 'hit' | 'negative_hit' | 'miss'): void;
  /** Starts a store lookup; call the returned function with its result when it settles. */
  lookup(store: string): (result: StoreLookupResult) => void;
  /** Records a rate-limit decision. */
  rateLimit(allowed: boolean, degraded: boolean): void;
  /** Records a usage flush: the age in seconds of its oldest count, or a failure. */
  flush(lagSeconds: number, failed: boolean): void;
  /** Records a credit-ledger operation of `accountId`'s; `step` names the failed call of an `error`. */
  credits(operation: CreditOperation, accountId: string, step?: 'hold' | 'settle' | 'release'): void;
}

/**
 * A credit-ledger operation as the `keygate.credits.operation` attribute.
 *
 * @example
 * telemetry.credits('settle' satisfies CreditOperation, 'acct_1');
 */
export type CreditOperation = 'hold' | 'refused' | 'settle' | 'release' | 'lapse' | 'error';

// Bucket bounds in seconds, from 10 µs (a cached key) to 2.5 s (a store at its timeout).
const LATENCY_BUCKETS = [
  0.00001, 0.000025, 0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5,
];
// Usage counts wait for the flush interval (5 s by default), longer while the store is down.
const LAG_BUCKETS = [0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 900];
const SECONDS = { unit: 's', advice: { explicitBucketBoundaries: LATENCY_BUCKETS } } as const;

/** Seconds elapsed since `start`, a `performance.now()` reading. */
export function secondsSince(start: number): number {
  return (performance.now() - start) / 1000;
}

function assertTelemetry(options: TelemetryOptions): void {
  if (typeof options !== 'object' || options === null) {
    throw new InvalidInputError('telemetry', 'telemetry must be an object with a meter and/or a tracer');
  }
  checkOptionNames(options, TELEMETRY_NAMES, 'telemetry', 'telemetry');
  checkOptionNames(options.attributes, TELEMETRY_ATTRIBUTE_NAMES, 'telemetry.attributes', 'telemetry.attributes');
  if (options.meter !== undefined && typeof options.meter?.createCounter !== 'function') {
    throw new InvalidInputError('telemetry.meter', 'telemetry.meter must be an OpenTelemetry Meter');
  }
  if (options.tracer !== undefined && typeof options.tracer?.startSpan !== 'function') {
    throw new InvalidInputError('telemetry.tracer', 'telemetry.tracer must be an OpenTelemetry Tracer');
  }
}

interface Instruments {
  requests: Counter;
  duration: Histogram;
  storeLookups: Counter;
  storeDuration: Histogram;
  cache: Counter;
  rateLimit: Counter;
  flushLag: Histogram;
  flushFailures: Counter;
  credits: Counter;
}

function instrumentsOf(meter: Meter): Instruments {
  return {
    requests: meter.createCounter(METRICS.requests, { unit: '{request}', description: 'Authenticated requests' }),
    duration: meter.createHistogram(METRICS.duration, { ...SECONDS, description: 'Time to authenticate' }),
    storeLookups: meter.createCounter(METRICS.storeLookups, { unit: '{lookup}', description: 'Store lookups' }),
    storeDuration: meter.createHistogram(METRICS.storeDuration, { ...SECONDS, description: 'Store lookup time' }),
    cache: meter.createCounter(METRICS.cache, { unit: '{lookup}', description: 'Cache lookups' }),
    rateLimit: meter.createCounter(METRICS.rateLimit, { unit: '{decision}', description: 'Rate-limit decisions' }),
    flushLag: meter.createHistogram(METRICS.flushLag, {
      unit: 's',
      advice: { explicitBucketBoundaries: LAG_BUCKETS },
      description: 'Age of usage counts at flush',
    }),
    flushFailures: meter.createCounter(METRICS.flushFailures, { unit: '{flush}', description: 'Failed flushes' }),
    credits: meter.createCounter(METRICS.credits, { unit: '{operation}', description: 'Credit-ledger operations' }),
  };
}

// The attributes of the small, fixed sets, built once and frozen: the request path allocates none.
function frozenBy<V extends string | boolean>(name: string, values: readonly V[]): Map<V, Attributes> {
  return new Map(values.map((value) => [value, Object.freeze({ [name]: value })]));
}
const OUTCOMES = frozenBy('keygate.auth.outcome', ['allowed', 'denied']);
const CACHE_RESULTS = frozenBy('keygate.cache.result', ['hit', 'negative_hit', 'miss']);
const STORE_RESULTS = frozenBy<StoreLookupResult>('keygate.store.result', ['found', 'not_found', 'error', 'timeout']);
// Indexed by allowed * 2 + degraded.
const RATE_LIMITS: readonly Attributes[] = [false, true].flatMap((allowed) =>
  [false, true].map((degraded) =>
    Object.freeze({ 'keygate.ratelimit.allowed': allowed, 'keygate.ratelimit.degraded': degraded }),
  ),
);

/**
 * Builds the instruments for `options`, or `undefined` when neither a meter nor a tracer is given.
 * Throws `InvalidInputError` (field `telemetry`, `telemetry.meter` or `telemetry.tracer`) for
 * something that is not one. Errors thrown by an SDK while recording are swallowed: telemetry never
 * changes an outcome.
 *
 * @example
 * const telemetry = createTelemetry({ meter: metrics.getMeter('keygate') });
 * telemetry?.cache('hit');
 */
export function createTelemetry(options: TelemetryOptions | undefined): Telemetry | undefined {
  if (options === undefined) return undefined;
  assertTelemetry(options);
  if (!options.meter && !options.tracer) return undefined;
  const m = options.meter ? instrumentsOf(options.meter) : undefined;
  const tracer = options.tracer;
  const extra = options.attributes ?? {};
  return {
    auth(result, seconds, address) {
      if (!m) return;
      // One object per request: its code and mode vary, and opt-in attributes carry per-key values.
      const attributes: Attributes = {
        'keygate.auth.outcome': result.ok ? 'allowed' : 'denied',
        'keygate.auth.code': result.ok ? 'ok' : (result.code ?? 'unknown'),
        'keygate.key.mode': result.key?.mode ?? 'none',
      };
      if (extra.keyId && result.key) attributes['keygate.key.id'] = result.key.id;
      if (extra.hint && result.key) attributes['keygate.key.hint'] = result.key.hint;
      if (extra.address && address) attributes['client.address'] = address;
      try {
        m.requests.add(1, attributes);
        m.duration.record(seconds, OUTCOMES.get(result.ok ? 'allowed' : 'denied'));
      } catch {
        // An SDK that throws must not turn into a failed request.
      }
    },
    cache(result) {
      if (!m) return;
      try {
        m.cache.add(1, CACHE_RESULTS.get(result));
      } catch {}
    },
    lookup(store) {
      const start = performance.now();
      const span = tracer ? startSpan(tracer, store) : undefined;
      return (result) => {
        if (m) {
          const attributes = STORE_RESULTS.get(result);
          try {
            m.storeLookups.add(1, attributes);
            m.storeDuration.record(secondsSince(start), attributes);
          } catch {}
        }
        if (span) endSpan(span, result);
      };
    },
    rateLimit(allowed, degraded) {
      if (!m) return;
      try {
        m.rateLimit.add(1, RATE_LIMITS[allowed ? (degraded ? 3 : 2) : degraded ? 1 : 0] as Attributes);
      } catch {}
    },
    credits(operation, accountId, step) {
      if (!m) return;
      const attributes: Attributes = { 'keygate.credits.operation': operation };
      if (step) attributes['keygate.credits.step'] = step;
      if (extra.accountId) attributes['keygate.account.id'] = accountId;
      try {
        m.credits.add(1, attributes);
      } catch {}
    },
    flush(lagSeconds, failed) {
      if (!m) return;
      try {
        if (failed) m.flushFailures.add(1);
        else m.flushLag.record(lagSeconds);
      } catch {}
    },
  };
}

/**
 * Runs a store lookup, reporting it to `telemetry` (when there is one) as `found`, `not_found` or
 * `error` (`timeout` for an error `timedOut` recognises): what a store calls around its `findByHash`.
 *
 * @example
 * findByHash(hash) { return observedLookup(this.telemetry, 'postgres', () => this.query(hash)); }
 * // A wrapper with a deadline of its own:
 * observedLookup(telemetry, 'MemoryKeyStore', () => withDeadline(hash), (err) => err === DEADLINE);
 */
export function observedLookup<T>(
  telemetry: Telemetry | undefined,
  store: string,
  run: () => Promise<T | null>,
  timedOut?: (err: unknown) => boolean,
): Promise<T | null> {
  if (!telemetry) return run();
  const done = telemetry.lookup(store);
  return run().then(
    (record) => {
      done(record ? 'found' : 'not_found');
      return record;
    },
    (err: unknown) => {
      done(timedOut !== undefined && isTimeout(timedOut, err) ? 'timeout' : 'error');
      throw err;
    },
  );
}

// A predicate that throws reads as "not a timeout": telemetry never changes what the caller sees.
function isTimeout(timedOut: (err: unknown) => boolean, err: unknown): boolean {
  try {
    return timedOut(err);
  } catch {
    return false;
  }
}

function startSpan(tracer: Tracer, store: string): Span | undefined {
  try {
    return tracer.startSpan('keygate.store.lookup', { attributes: { 'keygate.store': store } });
  } catch {
    return undefined;
  }
}

// SpanStatusCode.ERROR is 2; the enum is not imported, so that keygate never loads @opentelemetry/api.
const SPAN_ERROR = 2;

function endSpan(span: Span, result: StoreLookupResult): void {
  try {
    span.setAttribute('keygate.store.result', result);
    if (result === 'error' || result === 'timeout') span.setStatus({ code: SPAN_ERROR, message: result });
    span.end();
  } catch {
    // An SDK that throws must not turn into a failed request.
  }
}
