// GET /metrics for Prometheus: keygate reports through the OpenTelemetry API, and the OpenTelemetry
// Prometheus exporter turns what it recorded into the Prometheus text format on each scrape.
import { PrometheusExporter } from '@opentelemetry/exporter-prometheus';
import { MeterProvider } from '@opentelemetry/sdk-metrics';

/**
 * A meter for keygate and the Express handler that serves its metrics. The exporter starts no server
 * of its own: the service answers `GET /metrics` on its own port, bound to loopback by default (put it
 * behind your network's scrape path, not on the public internet).
 *
 * @returns {{ telemetry: import('keygate').TelemetryOptions,
 *   handler: (req: import('express').Request, res: import('express').Response) => void,
 *   shutdown: () => Promise<void> }}
 * @example
 * const metrics = prometheusMetrics();
 * const app = createApp({ store, ledger, telemetry: metrics.telemetry, metricsHandler: metrics.handler });
 */
export function prometheusMetrics() {
  const exporter = new PrometheusExporter({ preventServerStart: true });
  const provider = new MeterProvider({ readers: [exporter] });
  return {
    telemetry: { meter: provider.getMeter('keygate') },
    handler: (req, res) => exporter.getMetricsRequestHandler(req, res),
    shutdown: () => provider.shutdown(),
  };
}
