// The parts of OpenTelemetry's API that keygate calls, written as shapes of its own: an
// `@opentelemetry/api` Meter, Tracer, Counter, Histogram and Span fit them, yet keygate's
// declarations never import that package, so an application without OpenTelemetry type-checks
// keygate's types with `skipLibCheck: false`.

/**
 * Attribute values, as OpenTelemetry takes them (keygate records strings, numbers and booleans).
 *
 * @example
 * const attributes: TelemetryAttributes = { 'keygate.auth.outcome': 'allowed' };
 */
export type TelemetryAttributes = Record<
  string,
  | string
  | number
  | boolean
  | Array<null | undefined | string>
  | Array<null | undefined | number>
  | Array<null | undefined | boolean>
  | undefined
>;

/**
 * What keygate asks of an instrument's options (unit, description, bucket advice).
 *
 * @example
 * const options: TelemetryInstrumentOptions = { unit: 's', description: 'Time to authenticate' };
 */
export interface TelemetryInstrumentOptions {
  unit?: string;
  description?: string;
  advice?: { explicitBucketBoundaries?: number[] };
}

/**
 * An OpenTelemetry `Counter`, as keygate uses it.
 *
 * @example
 * const counter: TelemetryCounter = meter.createCounter('keygate.auth.requests');
 */
export interface TelemetryCounter {
  add(value: number, attributes?: TelemetryAttributes, context?: unknown): void;
}

/**
 * An OpenTelemetry `Histogram`, as keygate uses it.
 *
 * @example
 * const histogram: TelemetryHistogram = meter.createHistogram('keygate.auth.duration');
 */
export interface TelemetryHistogram {
  record(value: number, attributes?: TelemetryAttributes, context?: unknown): void;
}

/**
 * An OpenTelemetry `Meter` (from `metrics.getMeter(name)`), as keygate uses it.
 *
 * @example
 * import { metrics } from '@opentelemetry/api';
 * const meter: TelemetryMeter = metrics.getMeter('keygate');
 */
export interface TelemetryMeter {
  createCounter(name: string, options?: TelemetryInstrumentOptions): TelemetryCounter;
  createHistogram(name: string, options?: TelemetryInstrumentOptions): TelemetryHistogram;
}

/**
 * An OpenTelemetry `Span`, as keygate uses it.
 *
 * @example
 * const span: TelemetrySpan = tracer.startSpan('keygate.store.lookup');
 */
export interface TelemetrySpan {
  setAttribute(key: string, value: string): unknown;
  setStatus(status: { code: number; message?: string }): unknown;
  end(): void;
}

/**
 * An OpenTelemetry `Tracer` (from `trace.getTracer(name)`), as keygate uses it.
 *
 * @example
 * import { trace } from '@opentelemetry/api';
 * const tracer: TelemetryTracer = trace.getTracer('keygate');
 */
export interface TelemetryTracer {
  startSpan(name: string, options?: { attributes?: TelemetryAttributes }): TelemetrySpan;
}
