/**
 * keyset's OpenTelemetry metrics and spans in the example, over real HTTP on every
 * adapter: after a known mix of requests the decision counters equal what the server
 * answered, every lease is given back, each guarded request has its keyset.check span with
 * the store calls under it; and `METRICS_PORT` serves it all in the Prometheus text format,
 * which a Prometheus parser reads.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { redisUrl } from '@keyset/test-support';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createTestTelemetry, type TestTelemetry } from '../../../packages/opentelemetry/src/telemetry.test-support.ts';
import { ADAPTERS } from '../src/config.ts';
import { call, serveAlso, startApi, type TestApi } from './helpers.ts';

/** What the guard answered a request with: `allowed`, or the problem's code. */
const outcomeOf = (reply: { status: number; body: any }): string => (reply.status < 400 ? 'allowed' : String(reply.body?.code));

describe('telemetry on every adapter', () => {
  let t: TestApi;
  let telemetry: TestTelemetry;
  beforeAll(async () => {
    telemetry = createTestTelemetry();
    t = await startApi({ seedOrders: 50, telemetry: telemetry.telemetry });
  });
  afterAll(async () => {
    await t?.stop({ remove: true });
    await telemetry?.close();
  });

  it.each(ADAPTERS)('%s: the decision counters equal the answers, and every lease is given back', async (adapter) => {
    const server = await serveAlso(t, adapter);
    try {
      const before: Record<string, number> = {};
      const outcomes = ['allowed', 'rate_limited', 'insufficient_scope', 'missing_api_key', 'invalid_api_key', 'api_key_in_query'];
      for (const outcome of outcomes) before[outcome] = await telemetry.sum('keyset.decisions', { 'keyset.outcome': outcome });
      const checksBefore = telemetry.spans().filter((s) => s.name === 'keyset.check').length;

      const issued = await call(server.url, '/api/keys', { key: t.api.adminKey, method: 'POST', body: { name: `reader-${adapter}`, scopes: ['orders:read'], rateLimit: { limit: 3, windowSeconds: 3600 } } });
      expect(issued.status).toBe(201);
      const reader: string = issued.body.key;
      const replies = [issued];
      replies.push(await call(server.url, '/api/reports/daily', { key: reader })); // 403, spends one of 3
      replies.push(await call(server.url, '/api/orders?limit=2', { key: reader }));
      replies.push(await call(server.url, '/api/orders?limit=2', { key: reader }));
      replies.push(await call(server.url, '/api/orders?limit=2', { key: reader })); // 429
      replies.push(await call(server.url, '/api/orders'));
      replies.push(await call(server.url, '/api/orders', { key: `${reader.slice(0, -1)}${reader.endsWith('A') ? 'B' : 'A'}` }));
      replies.push(await call(server.url, `/api/orders?api_key=${reader}`));

      const expected: Record<string, number> = Object.fromEntries(outcomes.map((o) => [o, 0]));
      for (const reply of replies) expected[outcomeOf(reply)]! += 1;
      expect(expected).toEqual({ allowed: 3, rate_limited: 1, insufficient_scope: 1, missing_api_key: 1, invalid_api_key: 1, api_key_in_query: 1 });
      const counted: Record<string, number> = {};
      for (const outcome of outcomes) counted[outcome] = (await telemetry.sum('keyset.decisions', { 'keyset.outcome': outcome })) - before[outcome]!;
      expect(counted).toEqual(expected);
      // The adapter releases each lease once its response ends, a moment after the client has it.
      await vi.waitFor(async () => expect(await telemetry.sum('keyset.leases.in_flight')).toBe(0));

      const checks = telemetry.spans().filter((s) => s.name === 'keyset.check').slice(checksBefore);
      expect(checks).toHaveLength(replies.length);
      expect(checks.filter((s) => s.attributes['http.route'] === '/api/orders').map((s) => s.attributes['keyset.outcome']).sort()).toEqual(
        ['allowed', 'allowed', 'api_key_in_query', 'invalid_api_key', 'missing_api_key', 'rate_limited'],
      );
      // The rate-limit store is called only by the guard: each call is a child of a check.
      const checkIds = new Set(telemetry.spans().filter((s) => s.name === 'keyset.check').map((s) => s.spanContext().spanId));
      const limitCalls = telemetry.spans().filter((s) => s.name.startsWith('ratelimit '));
      expect(limitCalls.length).toBeGreaterThan(0);
      expect(limitCalls.every((s) => checkIds.has(s.parentSpanContext?.spanId ?? ''))).toBe(true);
    } finally {
      await server.close();
    }
  });
});

const redis = await redisUrl();

describe.skipIf(redis === undefined)('telemetry with REDIS_URL and an in-flight cap', () => {
  let t: TestApi;
  let telemetry: TestTelemetry;
  beforeAll(async () => {
    telemetry = createTestTelemetry();
    t = await startApi({ seedOrders: 50, redisUrl: redis!, inFlightMax: 4, telemetry: telemetry.telemetry });
  });
  afterAll(async () => {
    await t?.stop({ remove: true });
    await telemetry?.close();
  });

  it('times the Redis stores under each check and gives every lease back', async () => {
    const issued = await call(t.api.url, '/api/keys', { key: t.api.adminKey, method: 'POST', body: { name: 'reader', scopes: ['orders:read'] } });
    expect(issued.status).toBe(201);
    const replies = await Promise.all([1, 2, 3].map(() => call(t.api.url, '/api/orders?limit=1', { key: issued.body.key })));
    expect(replies.map((r) => r.status)).toEqual([200, 200, 200]);
    expect(await telemetry.sum('keyset.decisions', { 'keyset.outcome': 'allowed', 'http.route': '/api/orders' })).toBe(3);
    await vi.waitFor(async () => expect(await telemetry.sum('keyset.leases.in_flight')).toBe(0));
    const spans = telemetry.spans();
    const checkIds = new Set(spans.filter((s) => s.name === 'keyset.check').map((s) => s.spanContext().spanId));
    for (const store of ['redis.ratelimit', 'redis.leases']) {
      const calls = spans.filter((s) => s.name.startsWith(`${store} `));
      expect(calls.length, store).toBeGreaterThan(0);
      expect(await telemetry.count('keyset.store.duration', { 'keyset.store': store })).toBe(calls.length);
      // A lease is given back when the response ends, after the check: that call is no child of it.
      const during = calls.filter((s) => !s.name.endsWith(' release'));
      expect(during.map((s) => s.name)).toContain(store === 'redis.leases' ? 'redis.leases acquire' : 'redis.ratelimit decide');
      expect(during.every((s) => checkIds.has(s.parentSpanContext?.spanId ?? '')), `${store}: ${during.map((s) => s.name).join(', ')}`).toBe(true);
    }
    expect(await telemetry.sum('keyset.store.failures')).toBe(0);
  });
});

describe('METRICS_PORT: GET /metrics in the Prometheus text format', () => {
  let t: TestApi;
  beforeAll(async () => {
    t = await startApi({ seedOrders: 50, metricsPort: 0 });
  });
  afterAll(() => t?.stop({ remove: true }));

  it('parses with a Prometheus parser and counts what the server answered', async () => {
    expect(t.api.metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
    expect(new URL(t.api.metricsUrl!).port).not.toBe(String(t.api.port));
    const admitted = await call(t.api.url, '/api/keys', { key: t.api.adminKey });
    expect(admitted.status).toBe(200);
    expect((await call(t.api.url, '/api/orders')).status).toBe(401);
    const res = await fetch(t.api.metricsUrl!);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    const text = await res.text();
    const families: { name: string; type: string; metrics: { value?: string; labels?: Record<string, string>; buckets?: Record<string, string>; count?: string }[] }[] = parsePrometheusTextFormat(text);
    const family = (name: string) => families.find((f) => f.name === name);
    const decisions = family('keyset_decisions_total');
    expect(decisions?.type).toBe('COUNTER');
    const byOutcome = Object.fromEntries(decisions!.metrics.map((m) => [m.labels!.keyset_outcome, Number(m.value)]));
    expect(byOutcome).toEqual({ allowed: 1, missing_api_key: 1 });
    expect(family('keyset_check_duration')?.type).toBe('HISTOGRAM');
    // The admin key was looked up once, in the store (a miss): nothing else was well-formed.
    expect(family('keyset_key_cache_lookups_total')?.metrics.map((m) => [m.labels!.keyset_cache_result, Number(m.value)])).toEqual([['miss', 1]]);
    expect(family('keyset_store_duration')?.type).toBe('HISTOGRAM');
    // This parser folds a histogram's labelled series into one: the labels are read off the text.
    expect(text).toMatch(/^keyset_store_duration_count\{keyset_store="keys",keyset_store_operation="findByDigest"[^}]*\} 1$/m);
    // No key text and no raw path in any label.
    expect(text).not.toContain(t.api.adminKey!.slice(-12));
    expect((await fetch(new URL('/api/orders', t.api.metricsUrl!))).status).toBe(404);
    expect((await call(t.api.url, '/metrics', { key: t.api.adminKey })).status).toBe(404);
  });
});

describe('METRICS_PORT in use', () => {
  it('the start fails naming METRICS_PORT, not PORT', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = (taken.address() as AddressInfo).port;
    try {
      await expect(startApi({ seedOrders: 50, metricsPort: port })).rejects.toThrow(`METRICS_PORT ${port} on 127.0.0.1 is in use`);
    } finally {
      taken.close();
    }
  });
});

describe('OTEL_EXPORTER_OTLP_ENDPOINT: metrics and spans pushed over OTLP/HTTP', () => {
  it('sends keyset.decisions to /v1/metrics and keyset.check spans to /v1/traces, at the latest on shutdown', async () => {
    const received: { path: string; body: string }[] = [];
    const collector = createServer((request, response) => {
      let body = '';
      request.setEncoding('utf8');
      request.on('data', (chunk: string) => (body += chunk));
      request.on('end', () => {
        received.push({ path: request.url ?? '', body });
        response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
    const endpoint = `http://127.0.0.1:${(collector.address() as AddressInfo).port}/otlp/`;
    const t = await startApi({ seedOrders: 50, otlpEndpoint: endpoint });
    try {
      expect((await call(t.api.url, '/api/keys', { key: t.api.adminKey })).status).toBe(200);
      expect((await call(t.api.url, '/api/orders')).status).toBe(401);
    } finally {
      await t.stop({ remove: true });
      collector.close();
    }
    const metrics = received.filter((r) => r.path === '/otlp/v1/metrics').map((r) => r.body).join('\n');
    const traces = received.filter((r) => r.path === '/otlp/v1/traces').map((r) => r.body).join('\n');
    expect(metrics).toContain('keyset.decisions');
    expect(metrics).toContain('missing_api_key');
    expect(traces).toContain('keyset.check');
    expect(traces).not.toContain(t.api.adminKey!.slice(-12));
  });
});
