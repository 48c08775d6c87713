/**
 * The caller a 403 `insufficient_scope` was raised for, kept on the error so the guard
 * can count the refused request against that caller's rate limit (scopes must not be
 * probed for free) without a second verification. Not enumerable, so loggers that
 * serialise the error do not print it; it holds no key text anyway (`VerifiedKey`).
 * A `Symbol.for` key, so two installed copies of @keyset/core agree.
 * @module
 */
import type { VerifiedKey } from '../key-record.ts';

const CALLER = Symbol.for('keyset.scope-refusal.caller');

/** Attaches the verified caller to an `insufficient_scope` error. */
export function withRefusedCaller<E extends object>(error: E, caller: VerifiedKey): E {
  Object.defineProperty(error, CALLER, { value: caller });
  return error;
}

/** The verified caller of an `insufficient_scope` error, when the keyring attached one. */
export function refusedCaller(error: unknown): VerifiedKey | undefined {
  return typeof error === 'object' && error !== null ? ((error as Record<symbol, VerifiedKey | undefined>)[CALLER] ?? undefined) : undefined;
}
