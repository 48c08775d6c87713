/**
 * `apiKey()` authenticates the request with core's guard and exposes the key as
 * `request.apiKey`; as an `onRequest` hook, before any body is parsed.
 * @module
 */
import { ConfigError } from '@keyset/core';
import { apiKeyCheckOptions, assertKnownOptions, type KnownOptions, nodeGuardRequest, releaseWhenClosed } from '@keyset/core/adapter';
import type { ApiKeyGuard, PermissionQuery } from '@keyset/core';
import type { FastifyReply, FastifyRequest } from 'fastify';

/** Options of `apiKey()`. */
export interface ApiKeyOptions {
  /** The guard from `createApiKeyGuard()`: create it once and share it between routes. */
  guard: ApiKeyGuard;
  /** Scopes the key must hold, else 403 `insufficient_scope`. @default [] (any valid key) */
  scopes?: readonly string[];
  /** Permissions the key must hold beside `scopes`, as a query: `{ or: ['orders:read', { and: ['orders:admin', 'reports:read'] }] }`, else 403 `insufficient_scope`. @default none */
  permissions?: PermissionQuery;
  /** Credits this route spends from the key's quota, an integer 0 to 1,000,000 (rate limits count requests). @default 1 */
  cost?: number;
  /** The route's name in the limiter's `onDecision` events, e.g. `'GET /api/orders'`. */
  route?: string;
  /** The socket's peer (IP allowlists, refused-credential budgets), never a header: the guard's `trustProxy` decides what `X-Forwarded-For` is believed (Fastify's `request.ip` is not used). @default the socket's peer, `request.raw.socket.remoteAddress` */
  clientAddress?: (request: FastifyRequest) => string | null | undefined;
}

const API_KEY_OPTIONS = { guard: true, scopes: true, permissions: true, cost: true, route: true, clientAddress: true } as const satisfies KnownOptions<ApiKeyOptions>;

/** The hook `apiKey()` returns. */
export type ApiKeyHook = (request: FastifyRequest, reply: FastifyReply) => Promise<void>;

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
  const { guard, clientAddress = socketPeer } = options;
  if (typeof guard?.check !== 'function') throw new ConfigError('apiKey() needs `guard`: pass createApiKeyGuard({ keyring })');
  if (typeof clientAddress !== 'function') throw new ConfigError('apiKey() clientAddress must be a function (request) => address');
  const checkOptions = apiKeyCheckOptions(options);
  return async function apiKey(request, reply) {
    // The target as sent (`request.raw.url`): the guard looks for keys in its query string.
    const { key, headers, release } = await guard.check(nodeGuardRequest(request.raw, request.raw.url, clientAddress(request)), checkOptions);
    // The in-flight lease ends with the response: sent, answered by the error handler, or the client gone.
    releaseWhenClosed(reply.raw, release);
    request.apiKey = key;
    reply.headers(headers);
  };
}

const socketPeer = (request: FastifyRequest): string | undefined => request.raw.socket?.remoteAddress;
