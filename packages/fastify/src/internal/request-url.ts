/**
 * URLs of a Fastify request, from the raw request line (`request.raw.url`): never from
 * Fastify's parsed `request.query`, whose repeated and bracketed keys the core must see
 * as sent.
 * @module
 */
import { KeysetError } from '@keyset/core';
import type { FastifyRequest } from 'fastify';

/** The request target as sent: path and query, origin-form (`/items?limit=2`). */
export function requestTarget(request: FastifyRequest): string {
  const target = request.raw.url ?? '/';
  if (target.startsWith('/')) return target;
  try {
    const url = new URL(target);
    return `${url.pathname}${url.search}`;
  } catch {
    return `/${target}`;
  }
}

/** The path of the request, without the query (which may hold credentials): the problem `instance`. */
export function requestPath(request: FastifyRequest): string {
  const target = requestTarget(request);
  const end = target.search(/[?#]/);
  return end === -1 ? target : target.slice(0, end);
}

/** The request's own absolute URL, built by `guardUrl` and taken over once by `publicUrl`. */
// On the request itself (a symbol-keyed property), not in a WeakMap keyed by it: a WeakMap
// entry per request is an ephemeron every scavenge must trace.
const OWN_URL = Symbol('keyset.ownUrl');
interface OwnUrl {
  protocol: string;
  host: string;
  target: string;
  url: URL;
}
const slot = (request: FastifyRequest): { [OWN_URL]?: OwnUrl | undefined } => request as unknown as { [OWN_URL]?: OwnUrl | undefined };

// RFC 9110 §7.2 Host: a reg-name, IPv4 or bracketed IPv6 literal, and an optional port.
const HOST = /^(?:[A-Za-z0-9._~-]+|\[[0-9A-Fa-f:.]+\])(?::[0-9]{1,5})?$/;

/**
 * The absolute URL as the client saw it. Throws 400 `invalid_request` when the `Host`
 * (or, under Fastify's `trustProxy`, `X-Forwarded-Host`/`-Proto`) cannot form one.
 */
export function publicUrl(request: FastifyRequest, base: string | undefined): URL {
  const target = requestTarget(request);
  if (base !== undefined) return new URL(`${base}${target}`);
  const { protocol, host } = request;
  // apiKey() built it already for the guard: take it over instead of parsing it again
  // (when nothing it was built from has changed since).
  const seen = slot(request)[OWN_URL];
  if (seen !== undefined) {
    slot(request)[OWN_URL] = undefined;
    if (seen.target === target && seen.host === host && seen.protocol === protocol) return seen.url;
  }
  return ownUrl(protocol, host, target);
}

function ownUrl(protocol: string, host: string, target: string): URL {
  if ((protocol === 'http' || protocol === 'https') && typeof host === 'string' && HOST.test(host)) {
    try {
      return new URL(`${protocol}://${host}${target}`);
    } catch {
      // An out-of-range port, for instance: the same client error as a malformed Host.
    }
  }
  throw new KeysetError('invalid_request', {
    detail: 'The Host header does not form a valid URL.',
    extensions: { field: 'host' },
  });
}

/** The URL to show the guard (it only inspects the query string): never throws. */
export function guardUrl(request: FastifyRequest): string {
  const target = requestTarget(request);
  const { protocol, host } = request;
  try {
    const url = ownUrl(protocol, host, target);
    // Kept for paginate() later in the route, which would build the same URL.
    slot(request)[OWN_URL] = { protocol, host, target, url };
    return url.href;
  } catch {
    return `http://localhost${target}`;
  }
}
