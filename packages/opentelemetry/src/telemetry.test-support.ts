/**
 * Test support: a telemetry object over a real SDK meter provider (read on demand with a
 * `MetricReader`) and a real tracer provider that keeps finished spans in memory, with
 * Node's AsyncLocalStorage context manager so child spans attach as they do in production.
 */
import { context, type Attributes } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { DataPointType, MeterProvider, MetricReader, type MetricData } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { createKeysetTelemetry, type KeysetTelemetry, type KeysetTelemetryOptions } from './index.ts';

/** A reader that exports nothing: the test collects when it wants to look. */
class OnDemandReader extends MetricReader {
  protected override onForceFlush(): Promise<void> {
    return Promise.resolve();
  }
  protected override onShutdown(): Promise<void> {
    return Promise.resolve();
  }
}

export interface TestTelemetry {
  telemetry: KeysetTelemetry;
  /** Every metric recorded so far (cumulative). */
  metrics(): Promise<MetricData[]>;
  /** The sum of a counter's (or an up-down counter's) points whose attributes include `match`. */
  sum(name: string, match?: Attributes): Promise<number>;
  /** The number of recordings of a histogram whose attributes include `match`. */
  count(name: string, match?: Attributes): Promise<number>;
  spans(): ReadableSpan[];
  close(): Promise<void>;
}

const includes = (attributes: Attributes, match: Attributes): boolean => Object.entries(match).every(([name, value]) => attributes[name] === value);

export function createTestTelemetry(options: Omit<KeysetTelemetryOptions, 'meter' | 'tracer'> & { metrics?: boolean; traces?: boolean } = {}): TestTelemetry {
  const { metrics: withMetrics = true, traces = true, ...rest } = options;
  const reader = new OnDemandReader();
  const meterProvider = new MeterProvider({ readers: [reader] });
  const exporter = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const contextManager = new AsyncLocalStorageContextManager().enable();
  if (traces) context.setGlobalContextManager(contextManager);
  const telemetry = createKeysetTelemetry({
    ...rest,
    ...(withMetrics ? { meter: meterProvider.getMeter('test') } : {}),
    ...(traces ? { tracer: tracerProvider.getTracer('test') } : {}),
  });
  const metrics = async (): Promise<MetricData[]> => {
    const { resourceMetrics, errors } = await reader.collect();
    if (errors.length > 0) throw errors[0];
    return resourceMetrics.scopeMetrics.flatMap((scope) => scope.metrics);
  };
  const points = async (name: string, match: Attributes) => {
    const metric = (await metrics()).find((m) => m.descriptor.name === name);
    return (metric?.dataPoints ?? []).filter((point) => includes(point.attributes, match)).map((point) => ({ type: metric!.dataPointType, value: point.value }));
  };
  return {
    telemetry,
    metrics,
    sum: async (name, match = {}) => (await points(name, match)).reduce((total, point) => total + (point.type === DataPointType.SUM ? (point.value as number) : 0), 0),
    count: async (name, match = {}) => (await points(name, match)).reduce((total, point) => total + (point.type === DataPointType.HISTOGRAM ? (point.value as { count: number }).count : 0), 0),
    spans: () => exporter.getFinishedSpans(),
    async close() {
      if (traces) context.disable();
      await meterProvider.shutdown();
      await tracerProvider.shutdown();
    },
  };
}
