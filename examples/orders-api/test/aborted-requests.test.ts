/**
 * A client that goes away mid-body is not a server failure. `POST /api/keys` with a valid
 * admin key, over a raw socket: headers, part of the body, then the connection closes;
 * or a malformed chunked body, which Node's parser refuses with its own 400. Either way
 * the request log says `request aborted` (info, `aborted: true`, no status), never
 * `request failed` with a 500, on every adapter, and the server keeps serving.
 * Every wait is for an event (a log line, a socket close), never a fixed time.
 */
import { EventEmitter } from 'node:events';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { copyPgliteDataDir } from '@keyset/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADAPTERS } from '../src/config.ts';
import { createOrdersApi, type OrdersApi } from '../src/main.ts';
import { createLogger } from '../src/logger.ts';
import { call, tempDir } from './helpers.ts';
import { rmSync } from 'node:fs';

interface LogLine {
  level: number;
  msg: string;
  aborted?: boolean;
  req?: { method: string; url: string };
  res?: { statusCode: number };
  key?: { id: string; last4: string };
}

/** Captured log lines, with a way to wait for one. */
function capture() {
  const lines: LogLine[] = [];
  const raw: string[] = [];
  const events = new EventEmitter();
  return {
    lines,
    raw,
    destination: {
      write(text: string) {
        raw.push(text);
        const line = JSON.parse(text) as LogLine;
        lines.push(line);
        events.emit('line', line);
      },
    },
    /** Resolves with the first line (already written or to come) after `from` that matches. */
    next(predicate: (line: LogLine) => boolean, from: number): Promise<LogLine> {
      const seen = lines.slice(from).find(predicate);
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve) => {
        const listener = (line: LogLine): void => {
          if (!predicate(line)) return;
          events.off('line', listener);
          resolve(line);
        };
        events.on('line', listener);
      });
    },
  };
}

/** Opens a socket, sends `head` with `Expect: 100-continue`, resolves once the server asks for the body. */
function openRequest(url: string, head: string): Promise<{ socket: Socket; received: () => string; closed: Promise<void> }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port) });
    let received = '';
    const closed = new Promise<void>((done) => socket.once('close', () => done()));
    socket.on('error', () => undefined); // a reset after our own destroy or Node's 400
    socket.once('connect', () => socket.write(head));
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString('latin1');
      // Node dispatches the request to the app, then asks for the body (RFC 9110 §10.1.1).
      if (received.startsWith('HTTP/1.1 100')) resolve({ socket, received: () => received, closed });
    });
    socket.once('close', () => reject(new Error(`closed before 100 Continue: ${JSON.stringify(received)}`)));
  });
}

describe.each(ADAPTERS)('aborted requests on %s', (adapter) => {
  const log = capture();
  let api: OrdersApi;
  let admin: string;
  let dataDir: string;

  beforeAll(async () => {
    dataDir = tempDir();
    await copyPgliteDataDir(join(dataDir, 'pgdata'));
    api = await createOrdersApi({ adapter, port: 0, seedOrders: 20, dataDir, logger: createLogger('info', log.destination) });
    admin = api.adminKey!;
  }, 60_000);
  afterAll(async () => {
    await api?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const head = (framing: string): string =>
    `POST /api/keys HTTP/1.1\r\nHost: localhost\r\nAuthorization: ApiKey ${admin}\r\nContent-Type: application/json\r\n` +
    `Expect: 100-continue\r\n${framing}\r\n\r\n`;

  function expectNoFailure(): void {
    const failures = log.lines.filter((line) => line.level >= 50 || line.msg === 'request failed' || line.res?.statusCode === 500);
    expect(failures).toEqual([]);
    // Logged as the admin key's id and last 4, never the key.
    expect(log.raw.join('')).not.toContain(admin.slice(-12));
  }

  it('a client closing the connection mid-body is logged as "request aborted", not a 500', async () => {
    const from = log.lines.length;
    const { socket, closed } = await openRequest(api.url, head('Content-Length: 200'));
    socket.write('{"name":"half a bo');
    const aborted = log.next((line) => line.req?.url === '/api/keys', from); // the access-log line, whatever it says
    socket.destroy();
    await closed;
    const line = await aborted;
    expect(line).toMatchObject({ level: 30, msg: 'request aborted', aborted: true, req: { method: 'POST', url: '/api/keys' } });
    expect(line.res).toBeUndefined();
    expectNoFailure();
  });

  it('a malformed chunked body gets Node’s 400 and is logged as "request aborted", not a 500', async () => {
    const from = log.lines.length;
    const { socket, received, closed } = await openRequest(api.url, head('Transfer-Encoding: chunked'));
    const aborted = log.next((line) => line.req?.url === '/api/keys', from); // the access-log line, whatever it says
    socket.write('5\r\n{"nam\r\nZZ\r\nnot a chunk\r\n'); // `ZZ` is no chunk size
    await closed;
    expect(received()).toMatch(/^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 400 /);
    expect(await aborted).toMatchObject({ level: 30, msg: 'request aborted', aborted: true, req: { method: 'POST', url: '/api/keys' } });
    expectNoFailure();
  });

  it('keeps serving, and a complete request is still logged with its status', async () => {
    const from = log.lines.length;
    const issued = await call(api.url, '/api/keys', { key: admin, method: 'POST', body: { name: 'after aborts', scopes: ['orders:read'] } });
    expect(issued.status).toBe(201);
    expect(await log.next((line) => line.msg === 'request' && line.req?.url === '/api/keys', from)).toMatchObject({ level: 30, res: { statusCode: 201 } });
    expect(log.lines.slice(from).some((line) => line.aborted === true)).toBe(false);
    expectNoFailure();
  });
});
