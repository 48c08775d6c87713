/**
 * The transport half of an adapter on Node's `http` server (Express, Fastify): what the
 * guard reads from an `IncomingMessage`, and when an admitted request's in-flight lease is
 * given back. Node's types are described structurally: core imports nothing from Node.
 * @module
 */
import type { ApiKeyGuardRequest } from '../auth/api-key-guard.ts';
import { NO_LEASE } from '../concurrency/concurrency-limit.ts';
import { declaresBody } from './message-body.ts';

/** What the guard reads of Node's `IncomingMessage`. */
export interface NodeIncomingRequest {
  readonly headers: Readonly<Record<string, string | readonly string[] | undefined>>;
  /** Every header line as received, names and values in turn (Node keeps only the first `Authorization` in `headers`). */
  readonly rawHeaders: readonly string[];
}

/** Node's `ServerResponse`, as far as a lease needs it. */
export interface NodeServerResponse {
  /** `true` once it has emitted `close`. */
  readonly closed?: boolean;
  once(event: 'close', listener: () => void): unknown;
}

/**
 * What the guard reads from `req`: every `Authorization` line (two sets of credentials are
 * refused), `X-API-Key`, the target as sent (`url`), the socket's peer as the adapter knows
 * it, and the raw `X-Forwarded-For`, which the guard reads only under its `trustProxy`.
 *
 * @example
 * ```ts
 * const checked = await guard.check(nodeGuardRequest(req, req.originalUrl, req.socket.remoteAddress), checkOptions);
 * ```
 */
export function nodeGuardRequest(req: NodeIncomingRequest, url: string | undefined, remoteAddress: string | null | undefined): ApiKeyGuardRequest {
  return {
    authorization: authorizationLines(req.rawHeaders),
    xApiKey: req.headers['x-api-key'],
    url,
    remoteAddress,
    forwardedFor: req.headers['x-forwarded-for'],
  };
}

/**
 * Every `Authorization` line in `rawHeaders`, or `undefined` without one: what Node's
 * `headersDistinct.authorization` holds, without the object of arrays it builds for every
 * header on first read, several times what this scan costs (`bench framework-hooks`).
 */
function authorizationLines(rawHeaders: readonly string[]): string[] | undefined {
  let lines: string[] | undefined;
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    const name = rawHeaders[i] as string;
    if (name.length === 13 && name.toLowerCase() === 'authorization') (lines ??= []).push(rawHeaders[i + 1] as string);
  }
  return lines;
}

/**
 * Gives the lease back when the response ends, whatever its body: Node emits `close` on a
 * `ServerResponse` once its last byte is handed to the socket, for every status and method
 * (a `HEAD` included), and also when the client went away first; a response already
 * closed (the client went away while the guard decided) releases at once. A request that
 * holds no lease (no in-flight limit on the key: the guard's shared no-op) adds no
 * listener: a `close` listener on every response is work the socket's end does for nothing.
 *
 * @example
 * ```ts
 * releaseWhenClosed(res, checked.release);
 * ```
 */
export function releaseWhenClosed(res: NodeServerResponse, release: (() => void) | undefined): void {
  if (release === undefined || release === NO_LEASE) return;
  if (res.closed === true) release();
  else res.once('close', release);
}

/**
 * Whether `req`'s body is still on its way: then an early answer should close the
 * connection (`Connection: close`, RFC 9112 §9.6), since a client that was waiting for
 * `100 Continue` never sends it and the next request on the connection would be read as
 * that body. A request whose framing announces no body (no `Transfer-Encoding`, no
 * `Content-Length` but 0) has none pending, whenever it is asked: inside Node's `request`
 * event `complete` is still `false` even for a `GET`, since the parser marks a message
 * complete only after its listeners return. Otherwise Node's `complete` (every byte
 * arrived) decides; a body that arrived whole is drained by Node, and the connection
 * stays open.
 *
 * @example
 * ```ts
 * if (nodeBodyPending(req)) res.setHeader('connection', 'close');
 * ```
 */
export function nodeBodyPending(req: { readonly complete: boolean; readonly headers: Readonly<Record<string, string | readonly string[] | undefined>> }): boolean {
  return declaresBody(req.headers['transfer-encoding'], req.headers['content-length']) && !req.complete;
}
