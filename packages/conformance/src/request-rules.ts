/**
 * The request rules every adapter applies before routing (core's `requestError()` behind
 * each adapter's `checkRequest()`, and `singleAuthorization()` behind the guard), checked
 * with requests `fetch()` cannot send: any request target, any Host, two header lines of
 * one name. Test support only.
 * @module
 */
import { describe, expect, it } from 'vitest';
import { keptAlive } from './kept-alive.ts';
import type { RawResponse, RawSend } from './raw-send.ts';
import type { RunningApp } from './world.ts';

/** An app under test for the request rules. */
export interface RequestRulesUnderTest {
  /** Starts a fresh app, with a way to send raw requests to it. */
  start(): Promise<RunningApp & { raw: RawSend }>;
  /** `'socket'`: any target goes as written; `'request'`: a `Request` per call, so only paths (no `*`, no `\`). */
  transport: 'socket' | 'request';
  /**
   * `@hono/node-server` refuses a target that is no path, a backslash and a Host that
   * forms no URL itself (400, no body) before the adapter sees the request: only the
   * status is checked then (a Node server answers them with the same problem when it
   * runs core's `requestError()` on each request before handing it to the listener).
   */
  serverRefusesFirst?: boolean;
}

/** Registers the request-rule checks under `describe(name)`. */
export function describeRequestRules(name: string, adapter: RequestRulesUnderTest): void {
  describe(`request rules: ${name}`, () => {
    const host: [string, string] = ['host', 'localhost'];

    /** Starts a fresh app, runs `check` on it, and closes the app whatever `check` does. */
    const withApp = async (check: (app: RunningApp & { raw: RawSend }) => Promise<void>): Promise<void> => {
      const app = await adapter.start();
      try {
        await check(app);
      } finally {
        await app.close();
      }
    };

    /** The origin a socket transport's app listens on (its `raw` is a `rawOverSocket()`). */
    const originOf = (app: { raw: RawSend }): string => {
      const { origin } = app.raw as RawSend & { origin?: string };
      if (origin === undefined) throw new Error('rawOverSocket() sends this app its requests');
      return origin;
    };

    const expectRefused = async (res: RawResponse, field: string, instance: string, byServer = false): Promise<void> => {
      expect(res.status, res.body).toBe(400);
      if (byServer && adapter.serverRefusesFirst) return;
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(JSON.parse(res.body)).toMatchObject({ status: 400, code: 'invalid_request', field, instance });
    };

    it('refuses two sets of credentials (two lines, or joined by a comma) whichever comes first, with 400 naming authorization', async () => {
      await withApp(async (app) => {
        const { reader, writer } = app.world.keys;
        for (const lines of [
          [['authorization', `ApiKey ${reader}`], ['authorization', `ApiKey ${writer}`]],
          [['authorization', `ApiKey ${writer}`], ['authorization', `ApiKey ${reader}`]],
          [['authorization', `ApiKey ${reader}, ApiKey ${writer}`]],
          [['authorization', `ApiKey ${reader}`], ['authorization', 'Bearer x']],
        ] as [string, string][][]) {
          const res = await app.raw('GET', '/whoami', [host, ...lines]);
          await expectRefused(res, 'authorization', '/whoami');
          expect(res.body).not.toContain(reader.slice(-8));
        }
        // One set of credentials still passes.
        expect((await app.raw('GET', '/whoami', [host, ['authorization', `ApiKey ${reader}`]])).status).toBe(200);
      });
    });

    it('refuses a percent-encoded letter, digit or `-._~` in the path (/%69tems would be /items on some routers)', async () => {
      await withApp(async (app) => {
        const auth: [string, string] = ['authorization', `ApiKey ${app.world.keys.reader}`];
        for (const path of ['/%69tems', '/public/%69tems', '/whoam%69', '/nope%7E']) await expectRefused(await app.raw('GET', path, [host, auth]), 'path', path);
        // Reserved and non-ASCII escapes are how such characters travel: not refused.
        expect((await app.raw('GET', '/public/items?x=%61', [host])).status).toBe(200);
      });
    });

    it('refuses an empty or malformed Content-Type with 400 (not 415) on every route', async () => {
      await withApp(async (app) => {
        const auth: [string, string] = ['authorization', `ApiKey ${app.world.keys.reader}`];
        for (const type of ['', 'json', 'application/']) {
          await expectRefused(await app.raw('POST', '/echo', [host, auth, ['content-type', type]], '{"a":1}'), 'content-type', '/echo');
          await expectRefused(await app.raw('GET', '/public/items', [host, ['content-type', type]]), 'content-type', '/public/items');
        }
        expect((await app.raw('POST', '/echo', [host, auth, ['content-type', 'application/json; charset=utf-8']], '{"a":1}')).status).toBe(200);
      });
    });

    it('refuses a Host that names no host, or a key, on every route (open, keyed, paginated, unknown), with an instance', async () => {
      await withApp(async (app) => {
        const auth: [string, string] = ['authorization', `ApiKey ${app.world.keys.reader}`];
        for (const bad of ['a/b', 'x:99999', 'user@host']) {
          for (const path of ['/public/items', '/whoami', '/items', '/nope']) {
            await expectRefused(await app.raw('GET', `${path}?limit=1`, [['host', bad], auth]), 'host', path, true);
          }
        }
        // A key sent as Host is a valid DNS name by syntax: refused by the same rule as a Link
        // origin (core's isValidHost), never echoed.
        const key = app.world.keys.writer;
        for (const bad of [key, key.toLowerCase(), `${key.slice(key.lastIndexOf('_') + 1)}.example.com`, `${key}:3000`]) {
          for (const path of ['/public/items', '/whoami', '/items', '/nope']) {
            const res = await app.raw('GET', `${path}?limit=1`, [['host', bad], auth]);
            await expectRefused(res, 'host', path);
            expect(res.body).not.toContain(key.slice(-8));
            expect(res.headers.link ?? '').not.toContain(key.slice(-8).toLowerCase());
          }
        }
      });
    });

    it.skipIf(adapter.transport !== 'socket')(
      'answers a request whose body it did not read (401, 400, 404, 413) and then answers the next request on the same connection, or closes it cleanly with Connection: close',
      async () => {
        await withApp(async (app) => {
          const origin = originOf(app);
          const key = app.world.keys.reader;
          const body = `{"pad":"${'x'.repeat(20_000)}"}`;
          const cases: [expected: number, method: string, path: string, headers: string[]][] = [
            [401, 'POST', '/echo', ['content-type: application/json']],
            [400, 'POST', '/echo', [`authorization: ApiKey ${key}`, 'content-type: json']],
            [404, 'POST', '/nope', ['content-type: application/json']],
            [413, 'POST', '/echo', [`authorization: ApiKey ${key}`, 'content-type: application/json']],
          ];
          // The body sent at once, and held back until the server says 100 Continue (RFC 9110 §10.1.1).
          for (const expect100 of [false, true]) {
            for (const [expected, method, path, headers] of cases) {
              const socket = await keptAlive(origin);
              try {
                const head = [`${method} ${path} HTTP/1.1`, 'host: localhost', ...headers, `content-length: ${Buffer.byteLength(body)}`, ...(expect100 ? ['expect: 100-continue'] : []), '', ''].join('\r\n');
                socket.write(expect100 ? head : head + body);
                let res = await socket.read();
                if (res.status === 100) {
                  // Asked for the body (Node answers 100 itself): sent, even if the answer came first.
                  socket.write(body);
                  res = await socket.read();
                }
                expect(res.status, `${method} ${path}${expect100 ? ' (expect 100-continue)' : ''}: ${res.body}`).toBe(expected);
                if (res.headers.connection?.toLowerCase() === 'close') {
                  expect(await socket.ended(), 'closed after Connection: close').toBe(true);
                  continue;
                }
                socket.write('GET /public/items?limit=1 HTTP/1.1\r\nhost: localhost\r\n\r\n');
                const next = await socket.read();
                expect(next.status, `the next request after ${method} ${path}`).toBe(200);
              } finally {
                socket.close();
              }
            }
          }
        });
      },
    );

    it.skipIf(adapter.transport !== 'socket')(
      'keeps the connection after an early answer to a request without a body (404, 405, 400, 401): nothing of it is on its way',
      async () => {
        await withApp(async (app) => {
          const origin = originOf(app);
          // Several of these are answered inside Node's `request` event, where `complete` is
          // still false even for a GET: only the framing says there is no body to wait for.
          const socket = await keptAlive(origin);
          try {
            for (const [expected, method, target, headers] of [
              [404, 'GET', '/nope', []],
              [405, 'DELETE', '/echo', []],
              [405, 'OPTIONS', '/echo', []],
              [400, 'GET', '/%69tems', []],
              [401, 'GET', '/whoami', []],
              [401, 'POST', '/echo', ['content-length: 0']],
            ] as const) {
              socket.write([`${method} ${target} HTTP/1.1`, 'host: localhost', ...headers, '', ''].join('\r\n'));
              const res = await socket.read();
              expect(res.status, `${method} ${target}: ${res.body}`).toBe(expected);
              expect(res.headers.connection?.toLowerCase(), `${method} ${target}`).not.toBe('close');
            }
            socket.write('GET /public/items?limit=1 HTTP/1.1\r\nhost: localhost\r\n\r\n');
            expect((await socket.read()).status).toBe(200);
          } finally {
            socket.close();
          }
        });
      },
    );

    it.skipIf(adapter.transport !== 'socket')(
      'after each early 4xx to a 2 MB body (401, 400, 404, 413), the next request from a keep-alive client (fetch) is answered',
      async () => {
        await withApp(async (app) => {
          const origin = originOf(app);
          const key = app.world.keys.reader;
          // fetch() keeps its connections alive and reuses the last one: a server that closes
          // it without saying so (no Connection: close) fails the next request ("other side closed").
          const body = 'x'.repeat(2_000_000);
          for (const [expected, path, headers] of [
            [401, '/echo', { 'content-type': 'application/json' }],
            [400, '/echo', { authorization: `ApiKey ${key}`, 'content-type': 'json' }],
            // Fastify applies its body limit (1 MiB) before it finds no route: 413, not 404.
            [[404, 413], '/nope', { 'content-type': 'application/json' }],
            [413, '/echo', { authorization: `ApiKey ${key}`, 'content-type': 'application/json' }],
          ] as const) {
            for (let i = 0; i < 2; i += 1) {
              const res = await fetch(new URL(path, origin), { method: 'POST', headers, body });
              expect(([] as number[]).concat(expected), path).toContain(res.status);
              await res.text();
              const next = await fetch(new URL('/public/items?limit=1', origin)).then((r) => r.status, (error: Error) => `${error.message}: ${String(error.cause)}`);
              expect(next, `the request after ${res.status}`).toBe(200);
            }
          }
        });
      },
      30_000,
    );

    it.skipIf(adapter.transport !== 'socket')('refuses `*`, a backslash and a target that is no path with 400 naming the path', async () => {
      await withApp(async (app) => {
        const auth: [string, string] = ['authorization', `ApiKey ${app.world.keys.reader}`];
        for (const [method, target, instance] of [
          ['GET', '*', '*'],
          ['OPTIONS', '*', '*'],
          ['GET', '/items\\x', '/items%5Cx'],
        ] as const) {
          await expectRefused(await app.raw(method, target, [host, auth]), 'path', instance, true);
        }
        // A target starting with `\` is refused by Node's HTTP parser before any adapter runs.
        expect((await app.raw('GET', '\\items', [host, auth])).status).toBe(400);
        // A backslash in the query is the parameters' business.
        expect((await app.raw('GET', '/public/items?x=\\', [host])).status).toBe(200);
      });
    });
  });
}
