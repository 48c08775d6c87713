/**
 * Test helpers: start the orders API in-process on port 0 with a temporary DATA_DIR,
 * talk to it over real HTTP, and capture its logs to check nothing secret leaks.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createOrdersApi, type OrdersApi, type OrdersApiOptions } from '../src/main.ts';
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
