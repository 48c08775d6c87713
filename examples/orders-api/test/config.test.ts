import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigurationError, DEFAULTS, EXAMPLE_DIR, loadConfig, parseRate, resolveConfig } from '../src/config.ts';
import { isCalendarDate, parseJsonObject } from '../src/app/validation.ts';
import { parseDuration } from '../src/cli.ts';
import { orderFilters } from '../src/app/order-filters.ts';

describe('loadConfig', () => {
  it('has documented defaults', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      port: 3000,
      host: '127.0.0.1',
      adapter: 'hono',
      dataDir: resolve(EXAMPLE_DIR, '.data'),
      seedOrders: 10_000,
      keyPrefix: 'ks_live',
      rateLimit: { limit: 100, windowSeconds: 1 },
      logLevel: 'info',
      databaseUrl: undefined,
      redisUrl: undefined,
      cursorSecrets: undefined,
    });
    expect(config.dataDir.endsWith('examples/orders-api/.data')).toBe(true);
  });

  it('reads every variable', () => {
    const config = loadConfig({
      PORT: '0',
      HOST: '0.0.0.0',
      ADAPTER: 'express',
      DATA_DIR: '/var/lib/orders',
      DATABASE_URL: 'postgres://u:p@db/orders',
      REDIS_URL: 'redis://cache:6379',
      SEED_ORDERS: '0',
      CURSOR_SECRETS: `${'a'.repeat(32)}, ${'b'.repeat(40)}`,
      KEY_PREFIX: 'acme_live',
      KEY_PEPPER: 'p'.repeat(32),
      RATE_LIMIT: '600/1m',
      PUBLIC_URL: 'https://api.example.com/v1/',
      LOG_LEVEL: 'debug',
    });
    expect(config).toMatchObject({
      port: 0,
      host: '0.0.0.0',
      adapter: 'express',
      dataDir: '/var/lib/orders',
      seedOrders: 0,
      cursorSecrets: ['a'.repeat(32), 'b'.repeat(40)],
      keyPrefix: 'acme_live',
      rateLimit: { limit: 600, windowSeconds: 60 },
      publicUrl: 'https://api.example.com/v1',
      logLevel: 'debug',
    });
  });

  it('accepts every adapter, names them all when ADAPTER is unknown, and is strict about case', () => {
    for (const adapter of ['hono', 'express', 'fastify', 'fetch'] as const) {
      expect(loadConfig({ ADAPTER: adapter }).adapter).toBe(adapter);
      expect(resolveConfig({ adapter }).adapter).toBe(adapter);
    }
    for (const bad of ['koa', 'Fastify', 'FETCH', 'node']) {
      expect(() => loadConfig({ ADAPTER: bad }), bad).toThrow('ADAPTER must be one of "hono", "express", "fastify", "fetch"');
    }
    expect(() => resolveConfig({ adapter: 'koa' as never })).toThrow(/ADAPTER must be one of/);
  });

  it('refuses one bad variable on its own, not only beside others', () => {
    for (const env of [{ PORT: '70000' }, { LOG_LEVEL: 'loud' }, { SEED_ORDERS: '1e3' }, { RATE_LIMIT: 'fast' }]) {
      expect(() => loadConfig(env), JSON.stringify(env)).toThrow(ConfigurationError);
    }
  });

  it('reads PUBLIC_BASE_URL, keeps PUBLIC_URL as its alias, and refuses the two set to different URLs', () => {
    expect(loadConfig({ PUBLIC_BASE_URL: 'https://api.example.com/' }).publicUrl).toBe('https://api.example.com');
    expect(loadConfig({ PUBLIC_URL: 'https://old.example.com' }).publicUrl).toBe('https://old.example.com');
    expect(loadConfig({ PUBLIC_BASE_URL: 'https://api.example.com', PUBLIC_URL: 'https://api.example.com' }).publicUrl).toBe('https://api.example.com');
    expect(() => loadConfig({ PUBLIC_BASE_URL: 'https://api.example.com', PUBLIC_URL: 'https://old.example.com' })).toThrow(/PUBLIC_BASE_URL and its alias PUBLIC_URL/);
    expect(() => loadConfig({ PUBLIC_BASE_URL: 'ftp://x' })).toThrow(/PUBLIC_BASE_URL/);
  });

  it('reads DATABASE_QUERY_TIMEOUT_MS: 5 s by default, 0 for none, refused out of range', () => {
    expect(loadConfig({}).databaseQueryTimeoutMs).toBe(5_000);
    expect(loadConfig({ DATABASE_QUERY_TIMEOUT_MS: '250' }).databaseQueryTimeoutMs).toBe(250);
    expect(loadConfig({ DATABASE_QUERY_TIMEOUT_MS: '0' }).databaseQueryTimeoutMs).toBe(0);
    for (const bad of ['5s', '-1', '99', '3600001', '1.5']) {
      expect(() => loadConfig({ DATABASE_QUERY_TIMEOUT_MS: bad }), bad).toThrow(/DATABASE_QUERY_TIMEOUT_MS/);
    }
    expect(() => resolveConfig({ databaseQueryTimeoutMs: 50 })).toThrow(/DATABASE_QUERY_TIMEOUT_MS/);
  });

  it('reads TRUST_PROXY: none by default, a number of proxies, or CIDR blocks; refuses the rest naming it', () => {
    expect(loadConfig({}).trustProxy).toBe(false);
    expect(loadConfig({ TRUST_PROXY: 'false' }).trustProxy).toBe(false);
    expect(loadConfig({ TRUST_PROXY: '0' }).trustProxy).toBe(false);
    expect(loadConfig({ TRUST_PROXY: '2' }).trustProxy).toEqual({ hops: 2 });
    expect(loadConfig({ TRUST_PROXY: '10.0.0.0/8, fd00::/8' }).trustProxy).toEqual({ cidrs: ['10.0.0.0/8', 'fd00::/8'] });
    for (const bad of ['true', '10.0.0.1/8', 'proxy.example', '1000', ',']) {
      expect(() => loadConfig({ TRUST_PROXY: bad }), bad).toThrow(/TRUST_PROXY/);
    }
    expect(() => resolveConfig({ trustProxy: { hops: 0 } })).toThrow(/TRUST_PROXY/);
  });

  it('reads MAX_OFFSET (off by default, "off" too) as a whole number of rows; refuses the rest naming it', () => {
    expect(loadConfig({})).toMatchObject({ maxOffset: false });
    expect(loadConfig({ MAX_OFFSET: '10000' })).toMatchObject({ maxOffset: 10_000 });
    expect(loadConfig({ MAX_OFFSET: '0' })).toMatchObject({ maxOffset: 0 });
    expect(loadConfig({ MAX_OFFSET: 'off' })).toMatchObject({ maxOffset: false });
    for (const bad of ['-1', '1.5', '1e4', '10k', '010', '+5', '9999999999999999']) {
      expect(() => loadConfig({ MAX_OFFSET: bad }), bad).toThrow(/MAX_OFFSET must be a whole number of rows from 0 to 999999999999999, or "off"/);
    }
    expect(() => resolveConfig({ maxOffset: -1 })).toThrow(/MAX_OFFSET/);
    expect(() => resolveConfig({ maxOffset: 2.5 })).toThrow(/MAX_OFFSET/);
  });

  it('reads KEY_SCHEMES: ApiKey by default, any of ApiKey, Bearer, X-API-Key; refuses the rest naming it', () => {
    expect(loadConfig({}).keySchemes).toEqual(['ApiKey']);
    expect(loadConfig({ KEY_SCHEMES: 'Bearer' }).keySchemes).toEqual(['Bearer']);
    expect(loadConfig({ KEY_SCHEMES: 'ApiKey, Bearer,X-API-Key' }).keySchemes).toEqual(['ApiKey', 'Bearer', 'X-API-Key']);
    for (const bad of ['bearer', 'Basic', 'ApiKey,ApiKey', 'ApiKey,', ',', 'X-Api-Key']) {
      expect(() => loadConfig({ KEY_SCHEMES: bad }), bad).toThrow(/KEY_SCHEMES must list one or more of ApiKey, Bearer, X-API-Key/);
    }
    expect(() => resolveConfig({ keySchemes: [] })).toThrow(/KEY_SCHEMES/);
  });

  it('reads METRICS_PORT (none by default, 0 to 65535, not PORT) and OTEL_EXPORTER_OTLP_ENDPOINT (an http(s) URL)', () => {
    expect(loadConfig({}).metricsPort).toBeUndefined();
    expect(loadConfig({}).otlpEndpoint).toBeUndefined();
    expect(loadConfig({ METRICS_PORT: '9464' }).metricsPort).toBe(9464);
    expect(loadConfig({ METRICS_PORT: '0' }).metricsPort).toBe(0);
    for (const bad of ['x', '-1', '65536', '1.5', '09464']) {
      expect(() => loadConfig({ METRICS_PORT: bad }), bad).toThrow(/METRICS_PORT must be an integer from 0 to 65535/);
    }
    expect(() => loadConfig({ PORT: '9464', METRICS_PORT: '9464' })).toThrow(/METRICS_PORT must differ from PORT/);
    expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://localhost:4318' }).otlpEndpoint).toBe('http://localhost:4318');
    expect(() => loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'localhost:4318' })).toThrow(/OTEL_EXPORTER_OTLP_ENDPOINT must be an http\(s\) URL/);
  });

  it('reads USAGE_FLUSH_MS (5000 by default, 10 to 3600000); refuses the rest naming it', () => {
    expect(loadConfig({}).usageFlushMs).toBe(5000);
    expect(loadConfig({ USAGE_FLUSH_MS: '200' }).usageFlushMs).toBe(200);
    expect(loadConfig({ USAGE_FLUSH_MS: '3600000' }).usageFlushMs).toBe(3_600_000);
    for (const bad of ['0', '9', '5s', '-5', '3600001', '1e4']) {
      expect(() => loadConfig({ USAGE_FLUSH_MS: bad }), bad).toThrow(/USAGE_FLUSH_MS must be a whole number of milliseconds from 10 to 3600000/);
    }
    expect(() => resolveConfig({ usageFlushMs: 5 })).toThrow(/USAGE_FLUSH_MS/);
  });

  it('reads IN_FLIGHT_MAX, OWNER_IN_FLIGHT_MAX (off by default) and IN_FLIGHT_LEASE_SECONDS (60 s); refuses the rest naming them', () => {
    expect(loadConfig({})).toMatchObject({ inFlightMax: false, ownerInFlightMax: false, inFlightLeaseSeconds: 60 });
    expect(loadConfig({ IN_FLIGHT_MAX: '10', OWNER_IN_FLIGHT_MAX: '25', IN_FLIGHT_LEASE_SECONDS: '120' })).toMatchObject({
      inFlightMax: 10,
      ownerInFlightMax: 25,
      inFlightLeaseSeconds: 120,
    });
    expect(loadConfig({ IN_FLIGHT_MAX: 'off', OWNER_IN_FLIGHT_MAX: 'off' })).toMatchObject({ inFlightMax: false, ownerInFlightMax: false });
    for (const name of ['IN_FLIGHT_MAX', 'OWNER_IN_FLIGHT_MAX']) {
      for (const bad of ['0', '-1', '2.5', '5/s', 'none', '1000001', '010']) {
        expect(() => loadConfig({ [name]: bad }), `${name}=${bad}`).toThrow(new RegExp(`${name} must be a whole number`));
      }
    }
    for (const bad of ['0', '60s', '1.5', '86401']) {
      expect(() => loadConfig({ IN_FLIGHT_LEASE_SECONDS: bad }), bad).toThrow(/IN_FLIGHT_LEASE_SECONDS must be a whole number of seconds/);
    }
    expect(() => resolveConfig({ inFlightMax: 0 })).toThrow(/IN_FLIGHT_MAX/);
    expect(() => resolveConfig({ ownerInFlightMax: 1.5 })).toThrow(/OWNER_IN_FLIGHT_MAX/);
    expect(() => resolveConfig({ inFlightLeaseSeconds: 0 })).toThrow(/IN_FLIGHT_LEASE_SECONDS/);
    // With a cap on PostgreSQL, a lease shorter than one query's timeout would let a slow
    // request stop counting: refused, naming both variables and the least that fits.
    const pg = { DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/test', IN_FLIGHT_MAX: '5' };
    expect(() => loadConfig({ ...pg, IN_FLIGHT_LEASE_SECONDS: '4' })).toThrow(/IN_FLIGHT_LEASE_SECONDS \(4\) is shorter than DATABASE_QUERY_TIMEOUT_MS \(5000 ms\).*at least 5/);
    expect(() => loadConfig({ DATABASE_URL: pg.DATABASE_URL, OWNER_IN_FLIGHT_MAX: '5', IN_FLIGHT_LEASE_SECONDS: '10', DATABASE_QUERY_TIMEOUT_MS: '10001' })).toThrow(/at least 11/);
    expect(loadConfig({ ...pg, IN_FLIGHT_LEASE_SECONDS: '5' }).inFlightLeaseSeconds).toBe(5);
    expect(loadConfig({ ...pg, IN_FLIGHT_LEASE_SECONDS: '1', DATABASE_QUERY_TIMEOUT_MS: '0' }).inFlightLeaseSeconds).toBe(1);
    // No cap, or the embedded PGlite (no query timeout): nothing to compare.
    expect(loadConfig({ DATABASE_URL: pg.DATABASE_URL, IN_FLIGHT_LEASE_SECONDS: '1' }).inFlightLeaseSeconds).toBe(1);
    expect(loadConfig({ IN_FLIGHT_MAX: '5', IN_FLIGHT_LEASE_SECONDS: '1' }).inFlightLeaseSeconds).toBe(1);
  });

  it('resolves a relative DATA_DIR against the directory pnpm was run from', () => {
    expect(loadConfig({ DATA_DIR: 'tmp/data', INIT_CWD: '/work/repo' }).dataDir).toBe('/work/repo/tmp/data');
  });

  it('reports every problem at once, naming the variable', () => {
    let error: unknown;
    try {
      loadConfig({ PORT: '70000', ADAPTER: 'koa', SEED_ORDERS: '1e3', CURSOR_SECRETS: 'short', RATE_LIMIT: 'fast', LOG_LEVEL: 'loud', DATABASE_URL: 'mysql://x', OWNER_IN_FLIGHT_MAX: 'lots' });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigurationError);
    const message = (error as Error).message;
    for (const name of ['PORT', 'ADAPTER', 'SEED_ORDERS', 'CURSOR_SECRETS', 'RATE_LIMIT', 'LOG_LEVEL', 'DATABASE_URL', 'OWNER_IN_FLIGHT_MAX']) {
      expect(message).toContain(name);
    }
  });

  it('validates programmatic options the same way', () => {
    expect(() => resolveConfig({ keyPrefix: 'Bad-Prefix' })).toThrow(/KEY_PREFIX/);
    expect(() => resolveConfig({ seedOrders: -1 })).toThrow(/SEED_ORDERS/);
    expect(() => resolveConfig({ publicUrl: 'ftp://x' })).toThrow(/PUBLIC_URL/);
    expect(resolveConfig({}).port).toBe(DEFAULTS.port);
  });
});

describe('small parsers', () => {
  it('orderFilters refuses a customer the database cannot compare (U+0000 was a 500), naming the field', () => {
    for (const query of ['customer=%00', 'customer=a%00b', 'customer=%0A', 'customer=%7F']) {
      let error: unknown;
      try {
        orderFilters(new URLSearchParams(query));
      } catch (e) {
        error = e;
      }
      expect(error, query).toMatchObject({ code: 'invalid_request', extensions: { field: 'customer' } });
    }
    expect(orderFilters(new URLSearchParams('customer=cust_0042%20%E2%9C%93'))).toEqual({ customer: 'cust_0042 ✓' });
  });

  it('parseRate', () => {
    expect(parseRate('100/1s')).toEqual({ limit: 100, windowSeconds: 1 });
    expect(parseRate('10/s')).toEqual({ limit: 10, windowSeconds: 1 });
    expect(parseRate('5000/1h')).toEqual({ limit: 5000, windowSeconds: 3600 });
    for (const bad of ['0/1s', '10', '10/0s', '-1/1s', '1.5/1s', '10/1w']) expect(parseRate(bad), bad).toBeUndefined();
  });

  it('parseDuration', () => {
    expect(parseDuration('3600')).toBe(3600);
    expect(parseDuration('0')).toBe(0);
    expect(parseDuration('15m')).toBe(900);
    expect(parseDuration('7d')).toBe(604_800);
    for (const bad of ['-1', '1.5h', 'soon', '']) expect(parseDuration(bad), bad).toBeUndefined();
  });

  it('isCalendarDate', () => {
    expect(isCalendarDate('2024-02-29')).toBe(true);
    expect(isCalendarDate('2000-02-29')).toBe(true);
    expect(isCalendarDate('1900-02-29')).toBe(false);
    expect(isCalendarDate('2024-04-31')).toBe(false);
    expect(isCalendarDate('2024-00-10')).toBe(false);
    expect(isCalendarDate('٢٠٢٤-01-01')).toBe(false);
  });

  it('parseJsonObject accepts JSON media types only', () => {
    expect(parseJsonObject('{"a":1}', 'application/json; charset=utf-8')).toEqual({ a: 1 });
    expect(parseJsonObject('{"a":1}', 'application/merge-patch+json')).toEqual({ a: 1 });
    expect(parseJsonObject('{"a":1}', undefined)).toEqual({ a: 1 });
    expect(() => parseJsonObject('{"a":1}', 'text/plain')).toThrow(/application\/json/);
    expect(() => parseJsonObject('null', 'application/json')).toThrow(/object/);
  });

  it('names the media type or coding sent when it is a known word, whole; anything else is not echoed', () => {
    const detail = (contentType: string, encoding?: string): string => {
      try {
        parseJsonObject('{"a":1}', contentType, encoding);
      } catch (error) {
        return (error as { detail: string }).detail;
      }
      throw new Error('expected a refusal');
    };
    // `curl -d` without a Content-Type: no word cut, no ellipsis.
    expect(detail('application/x-www-form-urlencoded')).toBe('Send a JSON body with `Content-Type: application/json`, not `application/x-www-form-urlencoded`');
    expect(detail('Multipart/Form-Data; boundary=x')).toContain('not `multipart/form-data`');
    for (const sent of ['text/OiLzh74MVrNeFH1NUbIt', 'OiLzh74M/VrNeFH1NUbIt', 'application/x-OiLzh74MVrNeFH1NUbIt']) {
      expect(detail(sent)).toBe('Send a JSON body with `Content-Type: application/json`, not an unsupported media type');
    }
    expect(detail('application/json', 'gzip, br')).toBe('Send the JSON body without a Content-Encoding (got `gzip, br`)');
    expect(detail('application/json', 'OiLzh74MVrNeFH1NUbIt')).toBe('Send the JSON body without a Content-Encoding (got an unsupported coding)');
  });
});
