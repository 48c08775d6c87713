/**
 * Values that may or may not have to wait. Several of keyset's async functions (the
 * guard's `check`, the keyring's `authenticate` and `verify`, the limiter's `check`, the
 * paginator's `plan` and `page`, the codec's `encode` and `decode`) carry a twin that
 * answers with the value itself when nothing had to wait (warm caches, memory stores, a
 * synchronous crypto provider) and with a promise only for real I/O, so a request that
 * needs none passes without a microtask per step. The twin hangs on the function, not on
 * the object: an object whose method was replaced (a wrapper, a spy) loses the twin with
 * it and is awaited as before.
 * @module
 */

/** A value now, or a promise of it. */
export type MaybePromise<T> = T | Promise<T>;

const MAYBE_SYNC = Symbol.for('keyset.maybeSync');

type Twin<A extends unknown[], R> = (...args: A) => MaybePromise<R>;

/**
 * Whether `value` is a promise or another thenable, i.e. something to await. For what a
 * twin from `maybeSyncVariant` answered, `instanceof Promise` is the cheaper test: reading
 * `then` from result objects of every shape makes this function's property load
 * megamorphic in a hot path.
 *
 * @example
 * ```ts
 * const planned = myPlanner(query); // a plan, or a promise of one, from code of your own
 * const plan = isPromiseLike(planned) ? await planned : planned;
 * ```
 */
export function isPromiseLike<T>(value: T | PromiseLike<T>): value is PromiseLike<T> {
  return value instanceof Promise || (typeof value === 'object' && value !== null && typeof (value as { then?: unknown }).then === 'function');
}

/**
 * The variant of keyset's async function `fn` that answers without a promise when it can
 * (the same value, or the same error thrown instead of a rejection), or `undefined` when
 * `fn` has none (a function of your own): then call `fn` and await it. When the variant
 * has to wait, it answers with a native `Promise` (never another thenable), so
 * `instanceof Promise` tells the two answers apart.
 *
 * @example
 * ```ts
 * const fast = maybeSyncVariant(guard.check);
 * const result = fast !== undefined ? fast(request, options) : await guard.check(request, options);
 * const { key, headers } = result instanceof Promise ? await result : result;
 * ```
 */
export function maybeSyncVariant<A extends unknown[], R>(fn: ((...args: A) => Promise<R>) | undefined): Twin<A, R> | undefined {
  return typeof fn === 'function' ? ((fn as unknown as Record<symbol, Twin<A, R> | undefined>)[MAYBE_SYNC] ?? undefined) : undefined;
}

/**
 * `maybeSync` as a promise-returning function (a synchronous throw becomes a rejection),
 * carrying `maybeSync` as its variant. Internal: not exported from the package.
 */
export function withMaybeSync<A extends unknown[], R>(maybeSync: Twin<A, R>): (...args: A) => Promise<R> {
  const async = async (...args: A): Promise<R> => maybeSync(...args);
  Object.defineProperty(async, MAYBE_SYNC, { value: maybeSync });
  return async;
}
