/**
 * The URL a client used, rebuilt from Express's request: `req.originalUrl` (the raw
 * request target, query string untouched) on `req.protocol` and `req.host`, which follow
 * the app's `trust proxy` setting, or on a configured public base URL.
 * @module
 */
import { KeysetError } from '@keyset/core';
import type { Request } from 'express';


/** Path and query of the request target; absolute-form targets (`GET http://h/p`) reduced to them. */
export function requestTarget(req: Request): string {
  const target = req.originalUrl;
  if (target.startsWith('/')) return target;
  try {
    const url = new URL(target);
    return `${url.pathname}${url.search}`;
  } catch {
    return `/${target}`;
  }
}

/** The path of the request, without the query (which may hold credentials): the problem `instance`. */
export function requestPath(req: Request): string {
  const target = requestTarget(req);
  const end = target.search(/[?#]/);
  return end === -1 ? target : target.slice(0, end);
}

/** The request's own absolute URL, built by `guardUrl` and taken over once by `publicUrl`. */
// In the response's `res.locals` (a symbol-keyed property), not in a WeakMap keyed by the
// request: a WeakMap entry per request is an ephemeron every scavenge must trace.
// `res.locals` is a prototype-less dictionary Express makes per request, so adding to it
// changes no object shape, as adding to `req` itself would.
const OWN_URL = Symbol('keyset.ownUrl');
interface OwnUrl {
  app: unknown;
  target: string;
  url: URL;
}
type Slot = { [OWN_URL]?: OwnUrl | undefined };
const slot = (req: Request): Slot => (req.res?.locals ?? req) as unknown as Slot;

// RFC 9110 §7.2 Host: a reg-name, IPv4 or bracketed IPv6 literal, and an optional port.
const HOST = /^(?:[A-Za-z0-9._~-]+|\[[0-9A-Fa-f:.]+\])(?::[0-9]{1,5})?$/;

/**
 * The absolute URL as the client saw it. Throws 400 `invalid_request` when the `Host`
 * (or, behind a trusted proxy, `X-Forwarded-Host`/`-Proto`) header cannot form one.
 */
export function publicUrl(req: Request, base: string | undefined): URL {
  const target = requestTarget(req);
  if (base !== undefined) return new URL(`${base}${target}`);
  // apiKey() built it already for the guard: take it over instead of parsing it again
  // (the same app, since a mounted sub-app may trust proxies differently, and target).
  const seen = slot(req)[OWN_URL];
  if (seen !== undefined) {
    slot(req)[OWN_URL] = undefined;
    if (seen.app === req.app && seen.target === target) return seen.url;
  }
  const { protocol, host } = req;
  if ((protocol === 'http' || protocol === 'https') && host !== undefined && HOST.test(host)) {
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
export function guardUrl(req: Request): string {
  try {
    const url = publicUrl(req, undefined);
    // Kept for paginate() later in the route, which would build the same URL.
    slot(req)[OWN_URL] = { app: req.app, target: requestTarget(req), url };
    return url.href;
  } catch {
    return `http://localhost${requestTarget(req)}`;
  }
}
