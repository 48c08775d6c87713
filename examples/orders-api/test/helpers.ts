/**
 * Test helpers: start the orders API in-process on port 0 with a temporary DATA_DIR,
 * talk to it over real HTTP, and capture its logs to check nothing secret leaks.
 */
import { request as httpRequest } from 'node:http';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import pg from 'pg';
import { createOrdersApi, type OrdersApi, type OrdersApiOptions } from '../src/main.ts';
import { createApiKeyGuard, type TrustProxy } from '@keyset/core';
import { copyPgliteDataDir } from '@keyset/test-support';
import { createAdapterServer } from '../src/adapter-server.ts';
import { createApp } from '../src/app/create-app.ts';
import type { AdapterName } from '../src/config.ts';
import { dataPaths, loadOrCreateCursorSecret } from '../src/data-dir.ts';
import { createLogger } from '../src/logger.ts';

/** A started API with captured log lines and a temporary data directory. */
export interface TestApi {
  api: OrdersApi;
  dataDir: string;
  logs: string[];
  /** Closes the API (idempotent); `remove` also deletes the data directory. */
  stop(options?: { remove?: boolean }): Promise<void>;
}

export function tempDir(prefix = 'orders-api-test-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

export async function startApi(options: OrdersApiOptions & { dataDir?: string }): Promise<TestApi> {
  const dataDir = options.dataDir ?? tempDir();
  const logs: string[] = [];
  const logger = createLogger('info', { write: (line: string) => void logs.push(line) });
  let api: OrdersApi;
  try {
    // The embedded database starts from an initialised copy instead of running initdb (several
    // seconds per start); the app then migrates and seeds it exactly as on a first start.
    const { pgdata } = dataPaths(dataDir);
    if (options.databaseUrl === undefined && !existsSync(pgdata)) await copyPgliteDataDir(pgdata);
    api = await createOrdersApi({ port: 0, seedOrders: 2000, ...options, dataDir, logger });
  } catch (error) {
    if (options.dataDir === undefined) rmSync(dataDir, { recursive: true, force: true });
    throw error;
  }
  return {
    api,
    dataDir,
    logs,
    async stop({ remove = false } = {}) {
      await api.close();
      if (remove) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** One more server over a running API. */
export interface ExtraServer {
  url: string;
  /** The Node server, for tests that watch its connections. */
  server: Server;
  close(): Promise<void>;
}

/**
 * Serves `t`'s app (its database, keys, limiter, cursor secret and logger) through one
 * more server, on `adapter` and with its own `publicUrl`: the same wiring as
 * `createOrdersApi`, with no second PGlite to start (several seconds each), so a test can
 * cover every adapter and option over one database.
 */
export async function serveAlso(
  t: TestApi,
  adapter: AdapterName,
  options: { publicUrl?: string; trustProxy?: TrustProxy; cursorSecrets?: readonly string[] } = {},
): Promise<ExtraServer> {
  const { api } = t;
  // Another instance's cursor secrets, when given (another DATA_DIR's, say).
  const cursorSecrets = options.cursorSecrets ?? api.config.cursorSecrets ?? [loadOrCreateCursorSecret(t.dataDir)];
  // Another TRUST_PROXY is another guard (over the same keyring and limiter), as key-services.ts builds it.
  const guard = options.trustProxy === undefined ? api.keys.guard : createApiKeyGuard({ keyring: api.keys.keyring, limiter: api.keys.limiter, trustProxy: options.trustProxy });
  const app = createApp({ db: api.db, keyring: api.keys.keyring, guard, limiter: api.keys.limiter, usage: api.keys.usage.reads, cursorSecrets });
  const server = await createAdapterServer(adapter, app, { logger: api.logger, publicUrl: options.publicUrl });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** A response with its body read (JSON when there is one). */
export interface Reply {
  status: number;
  headers: Headers;
  body: any;
  text: string;
}

export interface CallOptions {
  key?: string | undefined;
  method?: string;
  /** An object is sent as JSON; a string is sent as is. */
  body?: unknown;
  headers?: Record<string, string>;
}

/** One HTTP request to `base` + `path`. */
export async function call(base: string, path: string, options: CallOptions = {}): Promise<Reply> {
  const { key, method = 'GET', body, headers = {} } = options;
  const init: RequestInit = { method, headers: { ...headers } };
  const h = init.headers as Record<string, string>;
  if (key !== undefined) h.authorization = `ApiKey ${key}`;
  if (body !== undefined) {
    if (typeof body === 'string') init.body = body;
    else {
      init.body = JSON.stringify(body);
      h['content-type'] ??= 'application/json';
    }
  }
  const res = await fetch(new URL(path, base), init);
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = text === '' ? undefined : JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  return { status: res.status, headers: res.headers, body: parsed, text };
}

/** The `rel="next"` target of a Link header, or null. */
export function nextLink(headers: Headers): string | null {
  return linkTo(headers, 'next');
}

/** The target of the link with relation `rel` (`next`, `prev`, `first`), or null. */
export function linkTo(headers: Headers, rel: string): string | null {
  const link = headers.get('link');
  if (link === null) return null;
  for (const part of link.split(', ')) {
    const match = /^<([^>]+)>; rel="([a-z]+)"$/.exec(part);
    if (match === null) throw new Error(`malformed Link header ${link}`);
    if (match[2] === rel) return match[1]!;
  }
  return null;
}

/** Runs one statement on the PostgreSQL server at `serverUrl` (its maintenance database), on a connection of its own. */
async function onServer(serverUrl: string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/** Creates database `name` (an identifier the test made) on the server at `serverUrl`; resolves the new database's URL. */
export async function createDatabase(serverUrl: string, name: string): Promise<string> {
  await onServer(serverUrl, `CREATE DATABASE ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return url.href;
}

/** Drops database `name` from the server at `serverUrl`, closing any connection still open to it. */
export async function dropDatabase(serverUrl: string, name: string): Promise<void> {
  await onServer(serverUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
}

/** A request sent byte for byte by `sendRaw`. */
export interface RawRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
}

export interface RawResponse {
  status: number;
  /** The status line's reason, every header and the body, as one text to search. */
  text: string;
  json: any;
}

/** One request exactly as given (raw path, any Host), over node:http: `fetch` would normalise both. */
export function sendRaw(origin: string, sent: RawRequest): Promise<RawResponse> {
  const { hostname, port } = new URL(origin);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: hostname, port, method: sent.method, path: sent.path, headers: { ...sent.headers, connection: 'close' } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        let json: unknown;
        try {
          json = JSON.parse(body);
        } catch {
          json = undefined;
        }
        const headers = Object.entries(res.headers).map(([name, value]) => `${name}: ${String(value)}`).join('\n');
        resolve({ status: res.statusCode ?? 0, text: `${res.statusMessage ?? ''}\n${headers}\n${body}`, json });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(sent.body);
  });
}
