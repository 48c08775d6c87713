import { describe, expect, it } from 'vitest';
import { NO_LEASE } from '../concurrency/concurrency-limit.ts';
import { finishWebResponse, webBodyPending, webGuardRequest } from './web-transport.ts';
import { nodeBodyPending, nodeGuardRequest, releaseWhenClosed } from './node-transport.ts';

const counter = (): { release: () => void; count: () => number } => {
  let released = 0;
  return { release: () => void (released += 1), count: () => released };
};

describe('finishWebResponse()', () => {
  it('releases when the body has been read to its end, not before', async () => {
    const lease = counter();
    const res = finishWebResponse('GET', new Response('hello'), { headers: {}, release: lease.release });
    expect(lease.count()).toBe(0);
    expect(await res.text()).toBe('hello');
    expect(lease.count()).toBe(1);
  });

  it('releases when the body is cancelled (the client went away)', async () => {
    const lease = counter();
    const res = finishWebResponse('GET', new Response('hello'), { headers: {}, release: lease.release });
    await res.body?.cancel();
    expect(lease.count()).toBe(1);
  });

  it('releases at once for HEAD, whose body is never sent, and for a response without a body', () => {
    for (const [method, response] of [
      ['HEAD', new Response('dropped by the server')],
      ['GET', new Response(null, { status: 204 })],
      ['POST', new Response(null, { status: 304 })],
    ] as const) {
      const lease = counter();
      finishWebResponse(method, response, { headers: {}, release: lease.release });
      expect(lease.count(), `${method} ${response.status}`).toBe(1);
    }
  });

  it("adds the guard's headers the response lacks, keeps its own, and copies one with immutable headers", async () => {
    const own = finishWebResponse('GET', new Response('x', { headers: { ratelimit: 'mine' } }), { headers: { ratelimit: 'guard', 'ratelimit-policy': 'p' } });
    expect([own.headers.get('ratelimit'), own.headers.get('ratelimit-policy')]).toEqual(['mine', 'p']);
    const redirect = finishWebResponse('GET', Response.redirect('http://localhost/x', 307), { headers: { ratelimit: 'guard' } });
    expect([redirect.status, redirect.headers.get('location'), redirect.headers.get('ratelimit')]).toEqual([307, 'http://localhost/x', 'guard']);
  });

  it('returns the response itself when there is no lease and nothing to add', () => {
    const response = new Response('x');
    expect(finishWebResponse('GET', response, { headers: {}, release: NO_LEASE })).toBe(response);
    expect(finishWebResponse('GET', response, { headers: {} })).toBe(response);
  });
});

describe('what the guard reads, by transport', () => {
  it('reads every credential header, the URL, the peer and the raw X-Forwarded-For from a Request', () => {
    const request = new Request('http://h/x?y=1', { headers: { authorization: 'ApiKey a', 'x-api-key': 'k', 'x-forwarded-for': '203.0.113.1' } });
    expect(webGuardRequest(request, '192.0.2.1')).toEqual({ authorization: 'ApiKey a', xApiKey: 'k', url: 'http://h/x?y=1', remoteAddress: '192.0.2.1', forwardedFor: '203.0.113.1' });
  });

  it("reads every Authorization line and the raw X-Forwarded-For from Node's IncomingMessage", () => {
    const req = {
      headers: { authorization: 'ApiKey a', 'x-forwarded-for': '203.0.113.1' },
      rawHeaders: ['Authorization', 'ApiKey a', 'X-Forwarded-For', '203.0.113.1', 'AUTHORIZATION', 'ApiKey b'],
    };
    expect(nodeGuardRequest(req, '/x?y=1', '127.0.0.1')).toEqual({ authorization: ['ApiKey a', 'ApiKey b'], xApiKey: undefined, url: '/x?y=1', remoteAddress: '127.0.0.1', forwardedFor: '203.0.113.1' });
  });

  it('reads no Authorization from a Node request without one, whatever other headers hold', () => {
    const req = { headers: { 'x-api-key': 'k' }, rawHeaders: ['X-Api-Key', 'k', 'X-Authorization', 'ApiKey a', 'Authorization-Extra', 'ApiKey b'] };
    expect(nodeGuardRequest(req, '/x', undefined).authorization).toBeUndefined();
  });
});

describe('releaseWhenClosed()', () => {
  it("releases on Node's close, or at once when the response has closed already", () => {
    const listeners: (() => void)[] = [];
    const open = { closed: false, once: (_event: 'close', listener: () => void) => listeners.push(listener) };
    const lease = counter();
    releaseWhenClosed(open, lease.release);
    expect(lease.count()).toBe(0);
    for (const listener of listeners) listener();
    expect(lease.count()).toBe(1);
    const gone = counter();
    releaseWhenClosed({ closed: true, once: () => expect.unreachable('no close comes after close') }, gone.release);
    expect(gone.count()).toBe(1);
  });

  it('adds no close listener for a request that holds no lease', () => {
    const res = { closed: false, once: () => expect.unreachable('nothing to give back, nothing to listen for') };
    releaseWhenClosed(res, NO_LEASE);
    releaseWhenClosed(res, undefined);
  });
});

describe('a body still on its way', () => {
  const sent = { 'content-length': '1' };
  it("is Node's complete when the server gives the IncomingMessage, else an unread body", async () => {
    expect(nodeBodyPending({ complete: false, headers: sent })).toBe(true);
    expect(nodeBodyPending({ complete: true, headers: sent })).toBe(false);
    const post = (): Request => new Request('http://h/', { method: 'POST', body: 'x', headers: sent });
    expect(webBodyPending(post(), { complete: true, readableEnded: false, headers: sent })).toBe(false);
    expect(webBodyPending(post(), { complete: false, readableEnded: false, headers: sent })).toBe(true);
    expect(webBodyPending(post())).toBe(true);
    const read = post();
    await read.text();
    expect(webBodyPending(read)).toBe(false);
    expect(webBodyPending(new Request('http://h/'))).toBe(false);
  });

  it('is never a body the framing does not announce, though Node has not yet marked the message complete', () => {
    // Inside Node's `request` event a GET is not yet `complete`: an answer sent there must not close.
    for (const headers of [{}, { 'content-length': '0' }, { 'content-length': '00' }]) {
      expect(nodeBodyPending({ complete: false, headers })).toBe(false);
      expect(webBodyPending(new Request('http://h/'), { complete: false, readableEnded: false, headers })).toBe(false);
    }
    expect(nodeBodyPending({ complete: false, headers: { 'transfer-encoding': 'chunked' } })).toBe(true);
    // Without Node's request: the framing the Request's headers carry (an OPTIONS may still have an empty stream).
    const options = new Request('http://h/', { method: 'OPTIONS', body: new ReadableStream(), duplex: 'half' } as RequestInit);
    expect(webBodyPending(options)).toBe(false);
    expect(webBodyPending(new Request('http://h/', { method: 'POST', body: 'x', headers: { 'transfer-encoding': 'chunked' } }))).toBe(true);
  });

  it('is a body a reader took part of and left, though every byte arrived', async () => {
    const post = new Request('http://h/', { method: 'POST', body: 'xy' });
    const reader = post.body!.getReader();
    await reader.read();
    reader.releaseLock();
    expect(webBodyPending(post, { complete: true, readableEnded: false, headers: { 'content-length': '2' } })).toBe(true);
    expect(webBodyPending(post, { complete: true, readableEnded: true, headers: { 'content-length': '2' } })).toBe(false);
  });
});
