/**
 * `telemetry.store(name, store)`: the same store with every method timed (latency and
 * failures by store and operation) and, with a tracer, a child span per call under the
 * request's `keyset.check` span. A method that answers synchronously still does (the
 * limiter never times a synchronous store, so the wrapper must not turn it into a promise).
 * @module
 */
import { SpanKind, SpanStatusCode, type Attributes, type Span, type Tracer } from '@opentelemetry/api';
import { ERROR_TYPE, STORE, STORE_OPERATION, errorType, isServerFailure } from './internal/attributes.ts';
import type { Instruments } from './internal/instruments.ts';

/** The names of `store`'s methods, its own and its prototypes' (a class instance keeps them there). */
function methodNames(store: object): string[] {
  const names = new Set<string>();
  for (let level: object | null = store; level !== null && level !== Object.prototype; level = Object.getPrototypeOf(level) as object | null) {
    for (const name of Object.getOwnPropertyNames(level)) {
      if (name !== 'constructor' && typeof (store as Record<string, unknown>)[name] === 'function') names.add(name);
    }
  }
  return [...names];
}

const isThenable = (value: unknown): value is PromiseLike<unknown> => typeof (value as { then?: unknown } | null | undefined)?.then === 'function';

/** Internal: see `KeysetTelemetry.store`. */
export function tracedStore<T extends object>(name: string, store: T, instruments: Instruments | undefined, tracer: Tracer | undefined): T {
  const wrapped: Record<string, unknown> = {};
  // Other properties stay the store's own: a getter (a connection state, a size) is read
  // from the store each time, not copied once.
  for (const [name, descriptor] of Object.entries(Object.getOwnPropertyDescriptors(store))) {
    if (descriptor.get !== undefined) Object.defineProperty(wrapped, name, { enumerable: descriptor.enumerable === true, get: () => (store as Record<string, unknown>)[name] });
    else if (typeof descriptor.value !== 'function') wrapped[name] = descriptor.value;
  }
  for (const operation of methodNames(store)) {
    const method = (store as Record<string, (...args: unknown[]) => unknown>)[operation] as (...args: unknown[]) => unknown;
    const attributes: Attributes = Object.freeze({ [STORE]: name, [STORE_OPERATION]: operation });
    const spanName = `${name} ${operation}`;
    wrapped[operation] = function traced(...args: unknown[]): unknown {
      const started = performance.now();
      const span: Span | undefined = tracer?.startSpan(spanName, { kind: SpanKind.CLIENT, attributes });
      const settle = (error?: unknown, failed = false): void => {
        const seconds = (performance.now() - started) / 1000;
        if (!failed) {
          instruments?.storeDuration.record(seconds, attributes);
          span?.end();
          return;
        }
        const failure = { ...attributes, [ERROR_TYPE]: errorType(error) };
        instruments?.storeDuration.record(seconds, failure);
        instruments?.storeFailures.add(1, failure);
        if (span !== undefined) {
          span.setAttribute(ERROR_TYPE, errorType(error));
          if (isServerFailure(error)) span.setStatus({ code: SpanStatusCode.ERROR });
          span.end();
        }
      };
      let result: unknown;
      try {
        result = method.apply(store, args);
      } catch (error) {
        settle(error, true);
        throw error;
      }
      if (!isThenable(result)) {
        settle();
        return result;
      }
      return Promise.resolve(result).then(
        (value) => {
          settle();
          return value;
        },
        (error: unknown) => {
          settle(error, true);
          throw error;
        },
      );
    };
  }
  return Object.freeze(wrapped) as T;
}
