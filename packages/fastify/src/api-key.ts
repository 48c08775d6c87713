/**
 * `apiKey()` authenticates the request with core's guard and exposes the key as
 * `request.apiKey`; as an `onRequest` hook, before any body is parsed.
 * @module
 */
import { ConfigError } from '@keyset/core';
import { apiKeyCheckOptions, assertKnownOptions, type KnownOptions } from '@keyset/core/adapter';
import type { ApiKeyGuard, ApiKeyGuardResult } from '@keyset/core';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { asHook, type Hook } from './check-request.ts';

/** Options of `apiKey()`. */
export interface ApiKeyOptions {
  /** The guard from `createApiKeyGuard()`: create it once and share it between routes. */
  guard: ApiKeyGuard;
  /** Scopes the key must hold, else 403 `insufficient_scope`. @default [] (any valid key) */
  scopes?: readonly string[];
  /** Credits this route spends from the key's quota, an integer 0 to 1,000,000 (rate limits count requests). @default 1 */
  cost?: number;
  /** The route's name in the limiter's `onDecision` events, e.g. `'GET /api/orders'`. */
  route?: string;
}

const API_KEY_OPTIONS = { guard: true, scopes: true, cost: true, route: true } as const satisfies KnownOptions<ApiKeyOptions>;

/** The hook `apiKey()` returns. */
export type ApiKeyHook = Hook;

/**
 * A hook that refuses the request unless it carries a valid API key with `scopes`.
 * Errors are core's problems (400, 401, 403, 429, 503) for the error handler; the
 * `RateLimit` headers go on every response of an authenticated request, errors included.
 *
 * @example
 * ```ts
 * app.get('/orders', { onRequest: apiKey({ guard, scopes: ['orders:read'] }) }, async (request) => ({ caller: request.apiKey.name }));
 * ```
 */
export function apiKey(options: ApiKeyOptions): ApiKeyHook {
  assertKnownOptions('apiKey', options, API_KEY_OPTIONS);
  const { guard } = options;
  if (typeof guard?.check !== 'function') throw new ConfigError('apiKey() needs `guard`: pass createApiKeyGuard({ keyring })');
  const checkOptions = apiKeyCheckOptions(options); // reads scopes, cost and route
  // Admits the request, or returns a native promise of that when the guard has to wait.
  return asHook((request: FastifyRequest, reply: FastifyReply): void | Promise<void> => {
    // The socket's peer and the raw headers: the guard's `trustProxy` decides what to
    // believe (one policy in core; Fastify's `request.ip` is not used).
    const guardRequest = {
      // Every `Authorization` line: the guard refuses more than one set of credentials.
      authorization: request.raw.headersDistinct.authorization,
      // Never credentials: only for a precise 401 (`unsupported_auth_scheme`).
      xApiKey: request.headers['x-api-key'],
      url: request.raw.url,
      remoteAddress: request.raw.socket?.remoteAddress,
      forwardedFor: request.headers['x-forwarded-for'],
    };
    return guard.check(guardRequest, checkOptions).then((passed) => admit(request, reply, passed));
  });
}

function admit(request: FastifyRequest, reply: FastifyReply, { key, headers, release }: ApiKeyGuardResult): void {
  request.apiKey = key;
  // Given back by the keyset plugin's onResponse and onRequestAbort hooks.
  (request as unknown as LeaseSlot)[LEASE] = release ?? null;
  reply.headers(headers);
}

/** Where `apiKey()` leaves the request's in-flight lease for the plugin's hooks (a request decoration). */
export const LEASE: unique symbol = Symbol('keyset.lease');
/** A request with its lease slot. */
export interface LeaseSlot {
  [LEASE]: (() => void) | null;
}

/** Gives the request's lease back (both hooks call it; the second call does nothing). */
export function releaseLease(request: FastifyRequest): void {
  (request as unknown as LeaseSlot)[LEASE]?.();
}
