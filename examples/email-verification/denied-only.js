// A billed route checks its key twice (app.js): once before its body is read, and once with the cost,
// which counts the request. The first check's denials are final and belong in the metrics; its allows
// are not decisions yet, and counting them would count every served request twice.

/** @param {import('@opentelemetry/api').Attributes | undefined} attributes */
const isAllow = (attributes) => attributes?.['keygate.auth.outcome'] === 'allowed';

/**
 * `telemetry` with the records of allowed outcomes (`keygate.auth.requests` and
 * `keygate.auth.duration` with `keygate.auth.outcome="allowed"`) left out; every other record passes.
 * Undefined or a telemetry without a meter is returned as it came.
 *
 * @param {import('keygate').TelemetryOptions | undefined} telemetry
 * @returns {import('keygate').TelemetryOptions | undefined}
 * @example
 * apiKeyAuth({ store, permissions, telemetry: deniedOnly(telemetry) }); // counts only its denials
 */
export function deniedOnly(telemetry) {
  const meter = telemetry?.meter;
  if (!meter) return telemetry;
  /** @type {import('@opentelemetry/api').Meter} */
  const filtered = Object.create(meter);
  filtered.createCounter = (name, options) => {
    const counter = meter.createCounter(name, options);
    return {
      add(value, attributes, context) {
        if (!isAllow(attributes)) counter.add(value, attributes, context);
      },
    };
  };
  filtered.createHistogram = (name, options) => {
    const histogram = meter.createHistogram(name, options);
    return {
      record(value, attributes, context) {
        if (!isAllow(attributes)) histogram.record(value, attributes, context);
      },
    };
  };
  return { ...telemetry, meter: filtered };
}
