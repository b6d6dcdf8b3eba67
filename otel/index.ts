import { metrics, trace } from '@opentelemetry/api';
import type { TelemetryOptions } from 'keygate';

/**
 * The instrumentation scope keygate's meter and tracer are named after.
 *
 * @example
 * metrics.getMeter(INSTRUMENTATION_SCOPE); // the meter globalTelemetry() uses
 */
export const INSTRUMENTATION_SCOPE = 'keygate';

/**
 * Telemetry options from OpenTelemetry's global providers (whatever SDK the application registered
 * with `metrics.setGlobalMeterProvider` / `trace.setGlobalTracerProvider`, or the no-op ones when
 * none is registered). Pass the result as the `telemetry` option of `authenticate`, an adapter,
 * `CachedKeyStore`, a store or `UsageRecorder`. This subpath is the only part of keygate that loads
 * `@opentelemetry/api` (an optional peer).
 *
 * @param attributes Opt-in per-key and per-client metric attributes. Default: none.
 * @example
 * import { globalTelemetry } from 'keygate/otel';
 * app.use('/v1/*', apiKeyAuth({ store, telemetry: globalTelemetry() }));
 */
export function globalTelemetry(attributes?: TelemetryOptions['attributes']): TelemetryOptions {
  const options: TelemetryOptions = {
    meter: metrics.getMeter(INSTRUMENTATION_SCOPE),
    tracer: trace.getTracer(INSTRUMENTATION_SCOPE),
  };
  if (attributes) options.attributes = attributes;
  return options;
}

export type { TelemetryOptions } from 'keygate';
export { METRICS } from 'keygate/store-kit';
