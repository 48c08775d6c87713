/**
 * Keep-alive soak, on each adapter over a real socket: 10,000 requests of Node's own
 * `fetch` (undici, kept-alive connections) from 8 concurrent clients, mixing valid pages,
 * bad query shapes, malformed percent-encodings, bad and tampered cursors, missing,
 * malformed and unknown keys, refusals before the body is read (small, oversized, chunked),
 * 413s, HEAD and OPTIONS; then `Expect: 100-continue` exchanges over raw kept-alive
 * sockets, each followed by one more request on the same socket when the answer kept it.
 *
 * Asserted: every request is answered, the server closes a connection only after a
 * response that said `Connection: close` (the socket's requests are matched to the
 * client's responses by an `x-soak-id` header), and no answer to a request without a body
 * says `Connection: close`. No latency budget is asserted (the suite
 * runs on busy machines); the maximum and the 99th percentile are printed, and
 * docs/testing.md gives the figures of a calm and a loaded run.
 *
 * `SOAK_REQUESTS` sets the number of fetch requests per adapter (default 10,000).
 */
import { generateKey } from '@keyset/core';
import type { Server } from 'node:http';
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADAPTERS } from '../src/config.ts';
import { call, serveAlso, startApi, type ExtraServer, type TestApi } from './helpers.ts';

const REQUESTS = Number(process.env.SOAK_REQUESTS ?? 10_000);
const CLIENTS = 8;
const EXPECT_EXCHANGES = 120;
/** Not a latency budget: only how long a request may hang before the test reports it as unanswered. */
const HANG_MS = 30_000;
const UNLIMITED = { limit: 1_000_000, windowSeconds: 1 };
const KiB = 1024;

let t: TestApi;
let admin: string;
let reader: string;
let cursor: string;

beforeAll(async () => {
  // Refused keys are part of the mix: with the default budget the address would be refused
  // after 60 of them, valid keys included, and the rest of the soak would be 429s.
  t = await startApi({ seedOrders: 200, rateLimit: UNLIMITED, refusedKeyLimit: UNLIMITED });
  admin = t.api.adminKey!;
  reader = (await call(t.api.url, '/api/keys', { key: admin, method: 'POST', body: { name: 'soak', scopes: ['orders:read'], rateLimit: UNLIMITED } })).body.key;
  cursor = (await call(t.api.url, '/api/orders?limit=5', { key: reader })).body.nextCursor;
}, 180_000);

afterAll(async () => {
  await t?.stop({ remove: true });
});

/** One request of the mix: a path and what `fetch` sends. */
interface Case {
  name: string;
  /** How many of each 100 requests are this case. */
  weight: number;
  path: () => string;
  init?: () => RequestInit;
}

const as = (key: string | undefined, headers: Record<string, string> = {}): Record<string, string> => (key === undefined ? headers : { authorization: `ApiKey ${key}`, ...headers });
const json = { 'content-type': 'application/json' };
const tampered = (text: string): string => {
  const at = Math.floor(text.length / 2);
  return text.slice(0, at) + (text[at] === 'A' ? 'B' : 'A') + text.slice(at + 1);
};
/** A body of `size` bytes sent chunked (no Content-Length), 16 KiB at a time. */
const streamed = (size: number): ReadableStream<Uint8Array> => {
  let sent = 0;
  return new ReadableStream({
    pull(controller) {
      if (sent >= size) return controller.close();
      const chunk = new Uint8Array(Math.min(16 * KiB, size - sent)).fill(0x20);
      sent += chunk.byteLength;
      controller.enqueue(chunk);
    },
  });
};
const post = (key: string | undefined, body: BodyInit, headers: Record<string, string> = json): RequestInit => ({
  method: 'POST',
  headers: as(key, headers),
  body,
  ...(body instanceof ReadableStream ? { duplex: 'half' } : {}),
});
const smallBody = JSON.stringify({ name: 'soak', scopes: ['orders:read'] });
const largeBody = JSON.stringify({ name: 'x'.repeat(20 * KiB), scopes: ['orders:read'] });
const mebibyteBody = 'x'.repeat(1024 * KiB);

const CASES: readonly Case[] = [
  // Valid pages, both modes.
  { name: 'first page', weight: 10, path: () => '/api/orders?limit=5', init: () => ({ headers: as(reader) }) },
  { name: 'next page', weight: 8, path: () => `/api/orders?limit=5&cursor=${cursor}`, init: () => ({ headers: as(reader) }) },
  { name: 'offset page', weight: 5, path: () => '/api/orders?offset=7&limit=3', init: () => ({ headers: as(reader) }) },
  // Bad query shapes.
  ...['%ZZ=1', 'cursor', 'cursor=', 'limit[]=5', 'cursor[]=x', 'limit=5;limit=6', 'limit=5&limit=6', 'limit=0', 'limit=1e2', 'limit=100000', 'offset=-1', 'offset=1&cursor=x'].map(
    (query): Case => ({ name: `shape ${query}`, weight: 2, path: () => `/api/orders?${query}`, init: () => ({ headers: as(reader) }) }),
  ),
  // Malformed percent-encodings.
  ...['limit=%ZZ', 'limit=%', 'offset=%E0%A4%A', 'offset=%zz', 'cursor=%', 'cursor=%C3%28', 'cursor=%ZZabc'].map(
    (query): Case => ({ name: `encoding ${query}`, weight: 2, path: () => `/api/orders?${query}`, init: () => ({ headers: as(reader) }) }),
  ),
  // Bad and tampered cursors.
  { name: 'junk cursor', weight: 3, path: () => '/api/orders?cursor=abc', init: () => ({ headers: as(reader) }) },
  { name: 'tampered cursor', weight: 3, path: () => `/api/orders?cursor=${tampered(cursor)}`, init: () => ({ headers: as(reader) }) },
  // Missing, malformed and unknown keys; a key in the query.
  { name: 'no key', weight: 3, path: () => '/api/orders?limit=2' },
  { name: 'malformed key', weight: 2, path: () => '/api/orders?limit=2', init: () => ({ headers: as('not-a-key') }) },
  { name: 'bad checksum', weight: 2, path: () => '/api/orders?limit=2', init: () => ({ headers: as(tampered(reader)) }) },
  { name: 'unknown key', weight: 3, path: () => '/api/orders?limit=2', init: () => ({ headers: as(generateKey('ks_live')) }) },
  { name: 'other scheme', weight: 1, path: () => '/api/orders?limit=2', init: () => ({ headers: { authorization: 'Bearer abc' } }) },
  { name: 'key in the query', weight: 1, path: () => `/api/orders?api_key=${generateKey('ks_live')}`, init: () => ({ headers: as(reader) }) },
  // Refusals before the body is read, with and without a body.
  { name: 'POST, no key, no body', weight: 2, path: () => '/api/keys', init: () => ({ method: 'POST', headers: json }) },
  { name: 'POST, no key', weight: 3, path: () => '/api/keys', init: () => post(undefined, smallBody) },
  { name: 'POST, unknown key', weight: 2, path: () => '/api/keys', init: () => post(generateKey('ks_live'), smallBody) },
  { name: 'POST, missing scope', weight: 2, path: () => '/api/keys', init: () => post(reader, smallBody) },
  { name: 'POST, no key, 1 MiB', weight: 1, path: () => '/api/keys', init: () => post(undefined, mebibyteBody) },
  { name: 'POST, no key, chunked 256 KiB', weight: 1, path: () => '/api/keys', init: () => post(undefined, streamed(256 * KiB)) },
  { name: 'POST, not JSON', weight: 2, path: () => '/api/keys', init: () => post(admin, 'name=x', { 'content-type': 'application/x-www-form-urlencoded' }) },
  { name: 'POST, malformed JSON', weight: 2, path: () => '/api/keys', init: () => post(admin, '{"name":') },
  { name: 'PATCH, unknown id', weight: 2, path: () => '/api/keys/key_unknown', init: () => ({ ...post(admin, smallBody), method: 'PATCH' }) },
  // Oversized bodies: 413.
  { name: '413, 20 KiB', weight: 2, path: () => '/api/keys', init: () => post(admin, largeBody) },
  { name: '413, 1 MiB', weight: 1, path: () => '/api/keys', init: () => post(admin, mebibyteBody) },
  { name: '413, chunked 256 KiB', weight: 1, path: () => '/api/keys', init: () => post(admin, streamed(256 * KiB)) },
  // HEAD, OPTIONS, an unknown path, an open route.
  { name: 'HEAD page', weight: 2, path: () => '/api/orders?limit=2', init: () => ({ method: 'HEAD', headers: as(reader) }) },
  { name: 'HEAD bad query', weight: 1, path: () => '/api/orders?limit=%ZZ', init: () => ({ method: 'HEAD', headers: as(reader) }) },
  { name: 'OPTIONS', weight: 2, path: () => '/api/orders', init: () => ({ method: 'OPTIONS' }) },
  { name: 'unknown path', weight: 1, path: () => '/api/nope' },
  { name: 'health', weight: 1, path: () => '/healthz' },
];

/** The mix as a deck of 100-odd cases in a fixed shuffled order (so a failure replays). */
function deck(): Case[] {
  const cards = CASES.flatMap((c) => Array.from({ length: c.weight }, () => c));
  let seed = 0x5eed;
  const random = (): number => {
    seed = (seed + 0x6d2b79f5) | 0;
    let x = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
  for (let i = cards.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [cards[i], cards[j]] = [cards[j]!, cards[i]!];
  }
  return cards;
}

/** What the server saw on each connection: the requests in order, and who closed it. */
interface Connection {
  id: number;
  requests: string[];
  /** `server`: it ended the connection first (or dropped it); `client`: the peer ended it first. */
  closedBy?: 'server' | 'client';
}

function watch(server: Server): Connection[] {
  const connections: Connection[] = [];
  const bySocket = new WeakMap<Socket, Connection>();
  server.on('connection', (socket: Socket) => {
    const connection: Connection = { id: connections.length, requests: [] };
    connections.push(connection);
    bySocket.set(socket, connection);
    let peerEnded = false;
    // Before Node's own 'end' listener, which answers the peer's FIN with its own.
    socket.prependListener('end', () => {
      if (!socket.writableEnded) peerEnded = true;
    });
    socket.on('close', () => {
      connection.closedBy = peerEnded ? 'client' : 'server';
    });
  });
  server.on('request', (req: { socket: Socket; headers: Record<string, unknown> }) => {
    const id = req.headers['x-soak-id'];
    if (typeof id === 'string') bySocket.get(req.socket)?.requests.push(id);
  });
  return connections;
}

/** What the client got for one request. */
interface Outcome {
  case: string;
  /** Sent with no body and not as HEAD (for which undici asks to close). */
  bodiless: boolean;
  status?: number;
  connection?: string | null;
  error?: string;
  ms: number;
}

async function soak(base: string, count: number): Promise<Map<string, Outcome>> {
  const cards = deck();
  const outcomes = new Map<string, Outcome>();
  const client = async (first: number): Promise<void> => {
    for (let i = first; i < count; i += CLIENTS) {
      const card = cards[i % cards.length]!;
      const init = card.init?.() ?? {};
      const id = String(i);
      const bodiless = init.body === undefined && init.method !== 'HEAD';
      const started = performance.now();
      try {
        const res = await fetch(base + card.path(), { ...init, headers: { ...(init.headers as Record<string, string>), 'x-soak-id': id }, signal: AbortSignal.timeout(HANG_MS) });
        await res.arrayBuffer();
        outcomes.set(id, { case: card.name, bodiless, status: res.status, connection: res.headers.get('connection'), ms: performance.now() - started });
      } catch (error) {
        const cause = (error as { cause?: { code?: string; message?: string } }).cause;
        outcomes.set(id, { case: card.name, bodiless, error: `${(error as Error).message}: ${cause?.code ?? ''} ${cause?.message ?? ''}`, ms: performance.now() - started });
      }
    }
  };
  await Promise.all(Array.from({ length: CLIENTS }, (_, i) => client(i)));
  return outcomes;
}

/** One response off a raw socket (a `100 Continue` too), and the socket's state after it. */
interface RawReply {
  status: number;
  headers: Record<string, string>;
}

/** A raw kept-alive socket that reads one response at a time (bodies by Content-Length or chunks). */
async function rawSocket(origin: string): Promise<{ write(data: string | Buffer): void; read(): Promise<RawReply>; ended(): Promise<void>; destroy(): void }> {
  const { hostname, port } = new URL(origin);
  const socket = connect(Number(port), hostname);
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  let data = Buffer.alloc(0);
  let ended = false;
  let wake: (() => void) | undefined;
  socket.on('data', (chunk: Buffer) => {
    data = Buffer.concat([data, chunk]);
    wake?.();
  });
  for (const event of ['end', 'close', 'error']) socket.on(event, () => ((ended = true), wake?.()));
  const more = (): Promise<void> =>
    new Promise((resolve, reject) => {
      if (ended) return reject(new Error('the server closed the connection without an answer'));
      const timer = setTimeout(() => reject(new Error(`no answer within ${HANG_MS} ms`)), HANG_MS);
      wake = () => ((wake = undefined), clearTimeout(timer), resolve());
    });
  const need = async (test: () => number): Promise<number> => {
    for (let at = test(); ; at = test()) {
      if (at !== -1) return at;
      await more();
    }
  };
  return {
    write: (chunk) => void socket.write(chunk),
    async read() {
      const head = await need(() => data.indexOf('\r\n\r\n'));
      const [statusLine = '', ...lines] = data.subarray(0, head).toString('latin1').split('\r\n');
      data = data.subarray(head + 4);
      const headers: Record<string, string> = {};
      for (const line of lines) headers[line.slice(0, line.indexOf(':')).toLowerCase()] = line.slice(line.indexOf(':') + 1).trim();
      const status = Number(statusLine.split(' ')[1]);
      if (status >= 200 && headers['transfer-encoding'] === 'chunked') {
        for (;;) {
          const line = await need(() => data.indexOf('\r\n'));
          const size = parseInt(data.subarray(0, line).toString('latin1'), 16);
          await need(() => (data.length >= line + size + 4 ? 0 : -1));
          data = data.subarray(line + size + 4);
          if (size === 0) break;
        }
      } else if (status >= 200) {
        const length = Number(headers['content-length'] ?? 0);
        await need(() => (data.length >= length ? 0 : -1));
        data = data.subarray(length);
      }
      return { status, headers };
    },
    async ended() {
      while (!ended) await more().catch(() => undefined);
    },
    destroy: () => socket.destroy(),
  };
}

/** An `Expect: 100-continue` request: headers, the body once `100 Continue` (or a final answer that keeps the connection) came. */
const EXPECTING: readonly { name: string; key: () => string | undefined; body: Buffer }[] = [
  { name: 'no key', key: () => undefined, body: Buffer.from(smallBody) },
  { name: 'unknown key', key: () => generateKey('ks_live'), body: Buffer.from(smallBody) },
  { name: 'missing scope', key: () => reader, body: Buffer.from(smallBody) },
  { name: 'no key, 1 MiB', key: () => undefined, body: Buffer.from(mebibyteBody) },
  { name: '413, 1 MiB', key: () => admin, body: Buffer.from(mebibyteBody) },
  { name: 'malformed JSON', key: () => admin, body: Buffer.from('{"name":') },
];

/**
 * `count` Expect exchanges over raw sockets, each on a socket kept from the last one when
 * its answer kept the connection; every answer that kept it is followed by `GET /healthz`
 * on the same socket, which must be answered too. Resolves the number of requests answered.
 */
async function expectExchanges(origin: string, count: number): Promise<number> {
  const { host } = new URL(origin);
  let socket = await rawSocket(origin);
  let answered = 0;
  for (let i = 0; i < count; i++) {
    const { name, key, body } = EXPECTING[i % EXPECTING.length]!;
    const auth = key() === undefined ? '' : `authorization: ApiKey ${key()}\r\n`;
    socket.write(`POST /api/keys HTTP/1.1\r\nhost: ${host}\r\n${auth}content-type: application/json\r\ncontent-length: ${body.length}\r\nexpect: 100-continue\r\n\r\n`);
    let reply = await socket.read().catch((error: Error) => Promise.reject(new Error(`Expect, ${name}: ${error.message}`)));
    if (reply.status === 100) {
      socket.write(body);
      reply = await socket.read().catch((error: Error) => Promise.reject(new Error(`Expect, ${name}, after 100: ${error.message}`)));
    } else if (reply.headers.connection !== 'close') {
      // A final answer before the body that keeps the connection: the body must still follow.
      socket.write(body);
    }
    answered++;
    expect(reply.status, `Expect, ${name}`).toBeGreaterThanOrEqual(400);
    if (reply.headers.connection === 'close') {
      await socket.ended();
      socket = await rawSocket(origin);
      continue;
    }
    socket.write(`GET /healthz HTTP/1.1\r\nhost: ${host}\r\n\r\n`);
    const next = await socket.read().catch((error: Error) => Promise.reject(new Error(`GET after Expect, ${name} (answered ${reply.status}, kept alive): ${error.message}`)));
    expect(next.status, `GET after Expect, ${name}`).toBe(200);
    answered++;
  }
  socket.destroy();
  return answered;
}

const percentile = (sorted: readonly number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? 0;

describe.each(ADAPTERS)('keep-alive soak on %s', (adapter) => {
  let server: ExtraServer;
  beforeAll(async () => {
    server = await serveAlso(t, adapter);
  });
  afterAll(async () => {
    await server?.close();
  });

  // About 20 s of CPU per adapter: the timeout is for a machine whose other work leaves this file a tenth of a core.
  it(`answers ${REQUESTS} fetch requests on ${CLIENTS}+ kept-alive connections, and closes one only after saying Connection: close`, async () => {
    const connections = watch(server.server);
    const started = performance.now();
    const outcomes = await soak(server.url, REQUESTS);
    const seconds = (performance.now() - started) / 1000;
    // Closed during the soak: what the server closes afterwards (the test's own close) is not its doing.
    const closed = connections.filter((c) => c.closedBy !== undefined).map((c) => ({ ...c }));
    const expectAnswered = await expectExchanges(server.url, EXPECT_EXCHANGES);

    const failures = [...outcomes].filter(([, o]) => o.error !== undefined);
    const latencies = [...outcomes.values()].map((o) => o.ms).sort((a, b) => a - b);
    const slowest = [...outcomes.values()].filter((o) => o.ms >= percentile(latencies, 99.9)).map((o) => `${o.case} ${o.ms.toFixed(0)} ms`);
    const saidClose = [...outcomes.values()].filter((o) => o.connection === 'close').length;
    const reused = connections.filter((c) => c.requests.length >= 2).length;
    console.log(
      `soak ${adapter}: ${outcomes.size} fetch requests in ${seconds.toFixed(1)} s over ${connections.length} connections (${reused} reused, ` +
        `${saidClose} answers said Connection: close, ${closed.filter((c) => c.closedBy === 'server').length} closed by the server); ` +
        `latency max ${latencies.at(-1)!.toFixed(1)} ms, p99 ${percentile(latencies, 99).toFixed(1)} ms, median ${percentile(latencies, 50).toFixed(1)} ms; ` +
        `${expectAnswered} requests answered on Expect sockets; slowest: ${slowest.join(', ')}`,
    );

    expect(failures.slice(0, 5), `${failures.length} of ${outcomes.size} requests unanswered`).toEqual([]);
    expect(outcomes.size).toBe(REQUESTS);
    expect(reused).toBeGreaterThanOrEqual(CLIENTS);
    const dropped = closed
      .filter((c) => c.closedBy === 'server' && c.requests.length > 0)
      .map((c) => ({ connection: c.id, requests: c.requests.length, last: outcomes.get(c.requests.at(-1)!) }))
      .filter(({ last }) => last?.connection !== 'close');
    // Nothing of a request without a body can be on its way: closing after it only costs a connection.
    const closedAfterBodiless = [...outcomes.values()].filter((o) => o.bodiless && o.connection === 'close').map((o) => `${o.case}: ${o.status}`);
    expect([...new Set(closedAfterBodiless)], 'requests without a body answered with Connection: close').toEqual([]);
    expect(dropped.slice(0, 5), `${dropped.length} connections closed by the server after an answer that kept them`).toEqual([]);
  }, 600_000);
});
