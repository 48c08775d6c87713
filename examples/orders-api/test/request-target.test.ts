/**
 * A request Node's HTTP parser accepts but that forms no URL: a Host header that is no
 * host (`a b`, `x:99999`, `user@x`), HTTP/1.0 with no Host at all, a backslash in the
 * path, an asterisk-form target. Every server answers an RFC 9457 problem, never a bare
 * status: Express and Fastify build the URL in @keyset/express and @keyset/fastify, Hono
 * and Fetch are served by @hono/node-server, which refused these with an empty 400 before
 * any of our code ran (src/node-server-errors.ts). Raw sockets: `fetch` would fix the URL.
 */
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADAPTERS } from '../src/config.ts';
import { call, serveAlso, startApi, type ExtraServer, type TestApi } from './helpers.ts';

let t: TestApi;
let key: string;
beforeAll(async () => {
  t = await startApi({ seedOrders: 5 });
  const issued = await call(t.api.url, '/api/keys', { key: t.api.adminKey, method: 'POST', body: { name: 'reader', scopes: ['orders:read'] } });
  key = issued.body.key as string;
}, 60_000);
afterAll(() => t?.stop({ remove: true }));

interface RawReply {
  status: number;
  contentType: string | undefined;
  body: any;
}

/** Sends `request` as is and reads the reply until the server closes the connection. */
function send(url: string, request: string): Promise<RawReply> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port) });
    let text = '';
    socket.on('data', (chunk: Buffer) => void (text += chunk.toString('utf8')));
    socket.on('error', reject);
    socket.on('close', () => {
      const [head = '', ...rest] = text.split('\r\n\r\n');
      const status = Number(head.slice(9, 12));
      const contentType = /^content-type: *(.*)$/im.exec(head)?.[1];
      let body: unknown;
      try {
        const raw = rest.join('\r\n\r\n');
        // A chunked body: take the JSON between the first chunk size and the last chunk.
        body = JSON.parse(/^[0-9a-f]+\r\n/i.test(raw) ? raw.slice(raw.indexOf('\r\n') + 2, raw.lastIndexOf('\r\n0\r\n')) : raw);
      } catch {
        body = undefined;
      }
      resolve({ status, contentType, body });
    });
    socket.write(request);
  });
}

const BAD_HOSTS = ['a b', 'x:99999', 'x:abc', 'user@x', 'x/y', '[::1', '127.0.0.1:80:80'];

describe.each(ADAPTERS)('a request target that forms no URL, on %s', (adapter) => {
  let server: ExtraServer;
  beforeAll(async () => {
    server = await serveAlso(t, adapter);
  });
  afterAll(() => server?.close());

  const request = (target: string, host: string | undefined, version = '1.1'): Promise<RawReply> =>
    send(server.url, `GET ${target} HTTP/${version}\r\n${host === undefined ? '' : `Host: ${host}\r\n`}Authorization: ApiKey ${key}\r\nConnection: close\r\n\r\n`);

  it.each(BAD_HOSTS)('Host: %s is 400 invalid_request naming host', async (host) => {
    const reply = await request('/api/orders', host);
    expect(reply.status).toBe(400);
    expect(reply.contentType).toMatch(/^application\/problem\+json/);
    expect(reply.body).toMatchObject({ status: 400, code: 'invalid_request', field: 'host' });
  });

  it('HTTP/1.0 without a Host header is 400 invalid_request naming host', async () => {
    const reply = await request('/api/orders', undefined, '1.0');
    expect([reply.status, reply.contentType?.split(';')[0]]).toEqual([400, 'application/problem+json']);
    expect(reply.body).toMatchObject({ code: 'invalid_request', field: 'host' });
  });

  it.each(['/api\\orders', '*'])('%s is answered with a problem, not a bare status', async (target) => {
    const reply = await request(target, 'localhost');
    expect(reply.status).toBeGreaterThanOrEqual(400);
    expect(reply.status).toBeLessThan(500);
    expect(reply.contentType).toMatch(/^application\/problem\+json/);
    expect(reply.body).toMatchObject({ status: reply.status });
  });
});
