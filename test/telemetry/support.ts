import {
  AggregationTemporality,
  type DataPoint,
  type Histogram,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
} from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { TelemetryOptions } from 'keygate';

/** One recorded data point: its attributes and its value (a sum, or a histogram's count and sum). */
export interface Point {
  attributes: Record<string, unknown>;
  value: number;
  count?: number;
}

/**
 * Telemetry backed by the OpenTelemetry SDK's in-memory reader and span exporter, so tests read what
 * a real SDK would have exported.
 */
export function memoryTelemetry(attributes?: TelemetryOptions['attributes']) {
  const reader = new PeriodicExportingMetricReader({
    exporter: new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE),
    exportIntervalMillis: 3_600_000,
  });
  const meterProvider = new MeterProvider({ readers: [reader] });
  const spans = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] });
  const options: TelemetryOptions = {
    meter: meterProvider.getMeter('keygate-test'),
    tracer: tracerProvider.getTracer('keygate-test'),
  };
  if (attributes) options.attributes = attributes;

  /** Every metric collected now, by name: its data points and its unit. */
  async function metrics(): Promise<Map<string, { unit: string; points: Point[] }>> {
    const { resourceMetrics } = await reader.collect();
    const out = new Map<string, { unit: string; points: Point[] }>();
    for (const scope of resourceMetrics.scopeMetrics) {
      for (const metric of scope.metrics) {
        const points = (metric.dataPoints as DataPoint<number | Histogram>[]).map((p) => toPoint(p));
        out.set(metric.descriptor.name, { unit: metric.descriptor.unit, points });
      }
    }
    return out;
  }

  /** The sum of a counter (or the count of a histogram) over the points whose attributes include `where`. */
  async function total(name: string, where: Record<string, unknown> = {}): Promise<number> {
    const metric = (await metrics()).get(name);
    if (!metric) return 0;
    return metric.points
      .filter((p) => Object.entries(where).every(([k, v]) => p.attributes[k] === v))
      .reduce((sum, p) => sum + (p.count ?? p.value), 0);
  }

  return {
    options,
    metrics,
    total,
    spans: () => spans.getFinishedSpans(),
    shutdown: () => Promise.all([meterProvider.shutdown(), tracerProvider.shutdown()]),
  };
}

function toPoint(p: DataPoint<number | Histogram>): Point {
  const attributes = { ...p.attributes };
  if (typeof p.value === 'number') return { attributes, value: p.value };
  return { attributes, value: p.value.sum ?? 0, count: p.value.count };
}
