/**
 * The example's OpenTelemetry set-up (docs/observability.md): with `METRICS_PORT`, keyset's
 * metrics in the Prometheus text format at `GET /metrics` on a listener of their own (so a
 * scraper needs no API key and the API's port never serves them); with
 * `OTEL_EXPORTER_OTLP_ENDPOINT`, metrics and spans pushed over OTLP/HTTP (JSON) to its
 * `/v1/metrics` and `/v1/traces`, `OTEL_EXPORTER_OTLP_HEADERS` and `_TIMEOUT` read by the
 * exporters as OpenTelemetry defines them.
 * Neither set: no SDK is started and nothing is wrapped.
 * @module
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { context } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { OTLPMetricExporter } from '@opentelemetry/exporter-metrics-otlp-http';
import { PrometheusExporter } from '@opentelemetry/exporter-prometheus';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { MeterProvider, PeriodicExportingMetricReader, type MetricReader } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { createKeysetTelemetry, type KeysetTelemetry } from '@keyset/opentelemetry';
import type { Config } from './config.ts';
import type { Logger } from './logger.ts';

/** The telemetry of one process, and what to stop on shutdown. */
export interface ExampleTelemetry {
  telemetry: KeysetTelemetry | undefined;
  /** `http://host:port/metrics` when `METRICS_PORT` is set. */
  metricsUrl: string | undefined;
  /** Closes the metrics listener, then exports what is left and stops the SDK. */
  close(): Promise<void>;
}

const NONE: ExampleTelemetry = Object.freeze({ telemetry: undefined, metricsUrl: undefined, close: async () => {} });

/** Starts what `config` asks for: the Prometheus listener, OTLP export, both, or nothing. */
export async function startTelemetry(config: Pick<Config, 'metricsPort' | 'otlpEndpoint' | 'host'>, logger: Logger): Promise<ExampleTelemetry> {
  const { metricsPort, otlpEndpoint, host } = config;
  if (metricsPort === undefined && otlpEndpoint === undefined) return NONE;
  const readers: MetricReader[] = [];
  // The exporter serves no port of its own: the listener below hands it GET /metrics only.
  const prometheus = metricsPort === undefined ? undefined : new PrometheusExporter({ preventServerStart: true });
  if (prometheus !== undefined) readers.push(prometheus);
  // The endpoint comes from the configuration (so a programmatic `otlpEndpoint` is honoured
  // too), with the signal's path appended as OpenTelemetry's specification says for
  // OTEL_EXPORTER_OTLP_ENDPOINT; the exporters read _HEADERS, _TIMEOUT and the rest themselves.
  const signalUrl = (signal: string): string => `${otlpEndpoint!.replace(/\/+$/, '')}/v1/${signal}`;
  if (otlpEndpoint !== undefined) readers.push(new PeriodicExportingMetricReader({ exporter: new OTLPMetricExporter({ url: signalUrl('metrics') }) }));
  const meterProvider = new MeterProvider({ readers });
  let tracerProvider: BasicTracerProvider | undefined;
  let contextManager: AsyncLocalStorageContextManager | undefined;
  if (otlpEndpoint !== undefined) {
    tracerProvider = new BasicTracerProvider({ spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: signalUrl('traces') }))] });
    // Store calls become children of the request's keyset.check span only with a context
    // manager that follows async calls.
    contextManager = new AsyncLocalStorageContextManager().enable();
    context.setGlobalContextManager(contextManager);
  }
  const telemetry = createKeysetTelemetry({
    meter: meterProvider.getMeter('orders-api'),
    ...(tracerProvider === undefined ? {} : { tracer: tracerProvider.getTracer('orders-api') }),
  });
  let server: Server | undefined;
  let metricsUrl: string | undefined;
  if (prometheus !== undefined && metricsPort !== undefined) {
    server = createServer((request, response) => {
      const path = (request.url ?? '/').split('?')[0];
      if (path === '/metrics' && (request.method === 'GET' || request.method === 'HEAD')) return prometheus.getMetricsRequestHandler(request, response);
      response.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('Not found: metrics are at GET /metrics\n');
    });
    const listening = server;
    const port = await new Promise<number>((resolve, reject) => {
      listening.once('error', reject);
      listening.listen(metricsPort, host, () => resolve((listening.address() as AddressInfo).port));
    }).catch(async (error: unknown) => {
      await meterProvider.shutdown().catch(() => undefined);
      await tracerProvider?.shutdown().catch(() => undefined);
      if (contextManager !== undefined) context.disable();
      // Not the API's own EADDRINUSE, which names PORT: this one is the metrics listener's.
      const busy = (error as { code?: unknown } | null)?.code === 'EADDRINUSE';
      throw new Error(busy ? `METRICS_PORT ${metricsPort} on ${host} is in use: stop the other server or set METRICS_PORT` : `the metrics listener failed to start on ${host}:${metricsPort}`, { cause: error });
    });
    const shown = host.includes(':') ? `[${host}]` : host;
    metricsUrl = `http://${shown === '0.0.0.0' || shown === '[::]' ? '127.0.0.1' : shown}:${port}/metrics`;
    logger.info({ metricsUrl }, 'Prometheus metrics listening');
  }
  if (otlpEndpoint !== undefined) logger.info({ otlpEndpoint }, 'exporting metrics and traces over OTLP/HTTP');
  return Object.freeze({
    telemetry,
    metricsUrl,
    async close() {
      if (server !== undefined) {
        const closing = server;
        const closed = new Promise<void>((resolve) => closing.close(() => resolve()));
        closing.closeAllConnections();
        await closed;
      }
      await meterProvider.shutdown().catch((error: unknown) => logger.warn({ err: error }, 'metrics shutdown failed'));
      await tracerProvider?.shutdown().catch((error: unknown) => logger.warn({ err: error }, 'traces shutdown failed'));
      if (contextManager !== undefined) context.disable();
    },
  });
}
