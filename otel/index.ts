import { metrics, trace } from '@opentelemetry/api';
import type { TelemetryOptions } from 'keygate';
import { checkOptionNames } from 'keygate/store-kit';

/**
 * The instrumentation scope keygate's meter and tracer are named after.
 *
 * @example
 * metrics.getMeter(INSTRUMENTATION_SCOPE); // the meter globalTelemetry() uses
 */
export const INSTRUMENTATION_SCOPE = 'keygate';

// The members of TelemetryOptions['attributes']: any other is refused (`unknown_option`).
const ATTRIBUTE_NAMES = Object.keys({
  keyId: true,
  hint: true,
  address: true,
  accountId: true,
} satisfies Record<keyof NonNullable<TelemetryOptions['attributes']>, true>);

/**
 * Telemetry options from OpenTelemetry's global providers (whatever SDK the application registered
 * with `metrics.setGlobalMeterProvider` / `trace.setGlobalTracerProvider`, or the no-op ones when
 * none is registered). Pass the result as the `telemetry` option of `authenticate`, an adapter,
 * `CachedKeyStore`, a store or `UsageRecorder`. This subpath is the only part of keygate that loads
 * `@opentelemetry/api` (an optional peer).
 *
 * @param attributes Opt-in per-key and per-client metric attributes (`keyId`, `hint`, `address`,
 * `accountId`; any other member is refused: `InvalidInputError`, reason `unknown_option`). Default: none.
 * @example
 * import { globalTelemetry } from 'keygate/otel';
 * app.use('/v1/*', apiKeyAuth({ store, telemetry: globalTelemetry() }));
 */
export function globalTelemetry(attributes?: TelemetryOptions['attributes']): TelemetryOptions {
  checkOptionNames(attributes, ATTRIBUTE_NAMES, 'globalTelemetry', 'attributes');
  const options: TelemetryOptions = {
    meter: metrics.getMeter(INSTRUMENTATION_SCOPE),
    tracer: trace.getTracer(INSTRUMENTATION_SCOPE),
  };
  if (attributes) options.attributes = attributes;
  return options;
}

export type { TelemetryOptions } from 'keygate';
export { METRICS } from 'keygate/store-kit';
