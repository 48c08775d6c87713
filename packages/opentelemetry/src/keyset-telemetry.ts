/**
 * `createKeysetTelemetry`: keyset's metrics and traces through the OpenTelemetry API the
 * application already set up. Everything is explicit wrapping of objects the application
 * builds anyway (the guard, the keyring, the stores, the limiter's `onDecision`), so
 * `@keyset/core` never depends on OpenTelemetry, and an application that wraps nothing
 * pays nothing.
 * @module
 */
import { metrics, trace, type Attributes, type Meter, type Tracer } from '@opentelemetry/api';
import { ConfigError, type ApiKeyGuard, type DecisionEvent, type DecisionHook, type KeyCacheResult, type Keyring, type UsageFlushEvent } from '@keyset/core';
import { CACHE_RESULT, DEGRADED, FLUSH_RESULT, OUTCOME, OWNER, REVOCATION_RESULT, REVOCATION_TYPE, WOULD_REFUSE_REASON, outcomeOf, routeAttributes } from './internal/attributes.ts';
import { createInstruments } from './internal/instruments.ts';
import { assertKnownOptions, type KnownOptions, type RevocationPublished } from '@keyset/core/adapter';
import { tracedGuard } from './traced-guard.ts';
import { tracedStore } from './traced-store.ts';

/** The instrumentation scope keyset's meter and tracer are named after. */
export const INSTRUMENTATION_SCOPE = '@keyset/opentelemetry';

/** Options of `createKeysetTelemetry`. */
export interface KeysetTelemetryOptions {
  /**
   * Where metrics go: a `Meter` (e.g. `meterProvider.getMeter('orders-api')`), or `'global'`
   * for the one `metrics.getMeter()` returns once the application registered a provider.
   * @default no metrics
   */
  meter?: Meter | 'global';
  /**
   * Where spans go: a `Tracer`, or `'global'` for `trace.getTracer()`. Child spans attach to
   * the `keyset.check` span only with a context manager (on Node,
   * `AsyncLocalStorageContextManager`, which the Node SDK registers).
   * @default no spans
   */
  tracer?: Tracer | 'global';
  /**
   * Adds `keyset.owner.id` to admitted decisions (`keyset.decisions`, the span) and to the
   * limiter's (`keyset.limiter.decisions`). Each owner is then a time series of its own:
   * turn it on only when the number of owners is one your metrics backend takes.
   * @default false
   */
  ownerAttribute?: boolean;
}

/** Every name `KeysetTelemetryOptions` knows, checked when the telemetry is made. */
const TELEMETRY_OPTIONS = { meter: true, tracer: true, ownerAttribute: true } as const satisfies KnownOptions<KeysetTelemetryOptions>;

/** What `createKeysetTelemetry` returns: wrappers for the objects to observe. */
export interface KeysetTelemetry {
  /** The guard, with each check counted, timed and traced. Pass the result to the adapters. */
  guard(guard: ApiKeyGuard): ApiKeyGuard;
  /** The keyring, with key verification (`authenticate`) timed by outcome. Pass the result to `createApiKeyGuard`. */
  keyring<K extends Pick<Keyring, 'authenticate'>>(keyring: K): K;
  /**
   * Any store (key, rate-limit, quota, concurrency, usage store) with each method call timed
   * and counted on failure by `name` and operation, and traced as a child span. `name` is
   * yours (`keys`, `ratelimit`, …): a handful of fixed names, never one per request.
   */
  store<T extends object>(name: string, store: T): T;
  /** An `onDecision` hook counting the limiter's decisions; `then` calls another hook after it (your usage counter, say). */
  onDecision(then?: DecisionHook): DecisionHook;
  /** The keyring's `onCacheLookup`: counts its cache hits, negative hits and misses (`createKeyring({ onCacheLookup: telemetry.onCacheLookup })`). */
  onCacheLookup(result: KeyCacheResult): void;
  /** The usage counter's `onFlush`: flush lag and dropped counts (`createUsageCounter({ onFlush: telemetry.onUsageFlush })`). */
  onUsageFlush(event: UsageFlushEvent): void;
  /**
   * A revocation bus's `onPublished`: its lag, from a publish to the last other instance's
   * confirmed eviction (`createRevocationBus({ …, onPublished: telemetry.onRevocationPublished })`).
   */
  onRevocationPublished(event: RevocationPublished): void;
}

/**
 * Creates keyset's telemetry over a meter and a tracer.
 *
 * @example
 * ```ts
 * const telemetry = createKeysetTelemetry({ meter: meterProvider.getMeter('orders-api') });
 * const guard = telemetry.guard(createApiKeyGuard({ keyring: telemetry.keyring(keyring), limiter }));
 * ```
 */
export function createKeysetTelemetry(options: KeysetTelemetryOptions = {}): KeysetTelemetry {
  assertKnownOptions('createKeysetTelemetry', options, TELEMETRY_OPTIONS);
  const { meter: givenMeter, tracer: givenTracer, ownerAttribute = false } = options;
  const meter = givenMeter === 'global' ? metrics.getMeter(INSTRUMENTATION_SCOPE) : givenMeter;
  const tracer = givenTracer === 'global' ? trace.getTracer(INSTRUMENTATION_SCOPE) : givenTracer;
  if (meter !== undefined && typeof meter.createCounter !== 'function') throw new ConfigError("createKeysetTelemetry: meter must be an OpenTelemetry Meter or 'global'");
  if (tracer !== undefined && typeof tracer.startActiveSpan !== 'function') throw new ConfigError("createKeysetTelemetry: tracer must be an OpenTelemetry Tracer or 'global'");
  if (typeof ownerAttribute !== 'boolean') throw new ConfigError('createKeysetTelemetry: ownerAttribute must be true or false');
  const instruments = meter === undefined ? undefined : createInstruments(meter);
  const observed = instruments !== undefined || tracer !== undefined;

  function keyring<K extends Pick<Keyring, 'authenticate'>>(given: K): K {
    if (instruments === undefined) return given;
    const { verifyDuration } = instruments;
    const authenticate: Keyring['authenticate'] = async (request, authenticateOptions) => {
      const started = performance.now();
      try {
        const key = await given.authenticate(request, authenticateOptions);
        verifyDuration.record((performance.now() - started) / 1000, { [OUTCOME]: 'valid' });
        return key;
      } catch (error) {
        verifyDuration.record((performance.now() - started) / 1000, { [OUTCOME]: outcomeOf(error) });
        throw error;
      }
    };
    return Object.freeze({ ...given, authenticate });
  }

  function onDecision(then?: DecisionHook): DecisionHook {
    if (instruments === undefined) return then ?? (() => {});
    const { limiterDecisions } = instruments;
    return (event: DecisionEvent) => {
      const attributes: Attributes = { ...routeAttributes(event.route), [OUTCOME]: event.outcome };
      if (event.reason !== undefined) attributes[WOULD_REFUSE_REASON] = event.reason;
      if (event.degraded !== undefined) attributes[DEGRADED] = event.degraded;
      if (ownerAttribute && event.ownerId !== undefined) attributes[OWNER] = event.ownerId;
      limiterDecisions.add(1, attributes);
      return then?.(event);
    };
  }

  // One frozen attribute set per result: a lookup allocates nothing.
  const cacheAttributes = { hit: Object.freeze({ [CACHE_RESULT]: 'hit' }), negative_hit: Object.freeze({ [CACHE_RESULT]: 'negative_hit' }), miss: Object.freeze({ [CACHE_RESULT]: 'miss' }) };
  const onCacheLookup = (result: KeyCacheResult): void => {
    const attributes = cacheAttributes[result];
    if (attributes !== undefined) instruments?.cacheLookups.add(1, attributes);
  };

  const flushed = Object.freeze({ [FLUSH_RESULT]: 'ok' });
  const failed = Object.freeze({ [FLUSH_RESULT]: 'failed' });
  const onUsageFlush = (event: UsageFlushEvent): void => {
    if (instruments === undefined) return;
    if (event.keys > 0) instruments.usageFlushLag.record(event.lagMs / 1000, event.ok ? flushed : failed);
    if (event.droppedRequests > 0) instruments.usageDropped.add(event.droppedRequests);
  };

  const revocationAttributes = (event: RevocationPublished): Attributes => ({ [REVOCATION_TYPE]: event.type, [REVOCATION_RESULT]: event.unacknowledged === 0 ? 'acknowledged' : 'timed_out' });
  const onRevocationPublished = (event: RevocationPublished): void => {
    // A publish no other instance received has no lag to tell.
    if (instruments === undefined || event.instances === 0) return;
    instruments.revocationLag.record(event.lagMs / 1000, revocationAttributes(event));
  };

  return Object.freeze({
    onCacheLookup,
    onUsageFlush,
    onRevocationPublished,
    guard: (guard: ApiKeyGuard) => (observed ? tracedGuard(guard, instruments, tracer, ownerAttribute) : guard),
    keyring,
    store: <T extends object>(name: string, store: T): T => {
      if (typeof name !== 'string' || name.length === 0 || name.length > 64) throw new ConfigError(`telemetry.store(name, store): name must be 1-64 characters such as 'ratelimit', got ${JSON.stringify(name)}`);
      return observed ? tracedStore(name, store, instruments, tracer) : store;
    },
    onDecision,
  });
}
