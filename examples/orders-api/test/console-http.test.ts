/**
 * `/console` over plain HTTP, on each of the four servers: the page, its script, its style
 * and its icon answer 200 with their own Content-Type, the strict Content-Security-Policy,
 * `nosniff`, and cache headers that keep nothing of a session (the page is `no-store`, and
 * so are the admin answers that carry a new key).
 * The page itself loads only its own files from this origin and has no inline script or
 * style, which is what lets the policy forbid both. The browser side is in
 * test/console-browser.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONSOLE_CSP, CONSOLE_MODULES, CONSOLE_PATHS } from '../src/app/console.ts';
import { ADAPTERS, type AdapterName } from '../src/config.ts';
import { call, serveAlso, startApi, type ExtraServer, type TestApi } from './helpers.ts';

const EXPECTED = [
  { path: CONSOLE_PATHS.page, type: 'text/html; charset=utf-8', cache: 'no-store', marker: '<title>orders API console</title>' },
  { path: CONSOLE_PATHS.script, type: 'text/javascript; charset=utf-8', cache: 'no-cache', marker: 'createConsole' },
  { path: CONSOLE_PATHS.style, type: 'text/css; charset=utf-8', cache: 'no-cache', marker: ':focus-visible' },
  { path: CONSOLE_PATHS.icon, type: 'image/svg+xml', cache: 'no-cache', marker: '<svg' },
  // The modules app.js imports: a browser runs a module only under a JavaScript type.
  ...CONSOLE_MODULES.map((file) => ({ path: `/console/${file}`, type: 'text/javascript; charset=utf-8', cache: 'no-cache', marker: 'export ' })),
];
/** Every script of the console: the entry module and what it imports. */
const SCRIPTS = [CONSOLE_PATHS.script, ...CONSOLE_MODULES.map((file) => `/console/${file}`)];

describe('/console over HTTP', () => {
  let t: TestApi;
  const servers = new Map<AdapterName, ExtraServer>();

  beforeAll(async () => {
    t = await startApi({ seedOrders: 0 });
    for (const adapter of ADAPTERS) servers.set(adapter, await serveAlso(t, adapter));
  }, 60_000);
  afterAll(async () => {
    await Promise.all([...servers.values()].map((server) => server.close()));
    await t?.stop({ remove: true });
  });

  it.each(ADAPTERS)('serves the page and its files with the security headers (%s)', async (adapter) => {
    const base = servers.get(adapter)!.url;
    for (const { path, type, cache, marker } of EXPECTED) {
      const reply = await call(base, path);
      expect(reply.status, path).toBe(200);
      expect(reply.headers.get('content-type'), path).toBe(type);
      expect(reply.headers.get('cache-control'), path).toBe(cache);
      expect(reply.headers.get('content-security-policy'), path).toBe(CONSOLE_CSP);
      expect(reply.headers.get('x-content-type-options'), path).toBe('nosniff');
      expect(reply.headers.get('referrer-policy'), path).toBe('no-referrer');
      expect(reply.headers.get('x-frame-options'), path).toBe('DENY');
      expect(reply.headers.get('set-cookie'), path).toBeNull();
      expect(reply.text, path).toContain(marker);
    }
  });

  it.each(ADAPTERS)('answers issue and rotate, which carry a key, with Cache-Control: no-store (%s)', async (adapter) => {
    const base = servers.get(adapter)!.url;
    const admin = t.api.adminKey!;
    const issued = await call(base, '/api/keys', { key: admin, method: 'POST', body: { name: `no-store ${adapter}`, scopes: ['orders:read'] } });
    expect(issued.status).toBe(201);
    expect(issued.headers.get('cache-control')).toBe('no-store');
    const { id } = JSON.parse(issued.text) as { id: string };
    const rotated = await call(base, `/api/keys/${id}/rotate`, { key: admin, method: 'POST', body: { overlapSeconds: 0 } });
    expect(rotated.status).toBe(201);
    expect(rotated.headers.get('cache-control')).toBe('no-store');
  });

  it('states a policy that allows this origin only, and no inline script or style', () => {
    const directives = new Map(CONSOLE_CSP.split(';').map((part) => {
      const [name, ...values] = part.trim().split(/\s+/);
      return [name!, values.join(' ')] as const;
    }));
    expect(directives.get('default-src')).toBe("'none'");
    for (const name of ['script-src', 'style-src', 'img-src', 'connect-src']) expect(directives.get(name), name).toBe("'self'");
    for (const name of ['base-uri', 'form-action', 'frame-ancestors']) expect(directives.get(name), name).toBe("'none'");
    expect(CONSOLE_CSP).not.toMatch(/unsafe-|\*|https?:/);
  });

  it('loads only its own files, with no inline script, style or event handler', async () => {
    const { text } = await call(servers.get('hono')!.url, CONSOLE_PATHS.page);
    const scripts = [...text.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)];
    expect(scripts.map(([, attributes]) => /src="([^"]+)"/.exec(attributes!)?.[1])).toEqual([CONSOLE_PATHS.script]);
    expect(scripts.every(([, , body]) => body!.trim() === '')).toBe(true);
    expect([...text.matchAll(/<link\b[^>]*href="([^"]+)"/g)].map(([, href]) => href)).toEqual([CONSOLE_PATHS.icon, CONSOLE_PATHS.style]);
    expect(text).not.toMatch(/<style\b|\sstyle=|\son[a-z]+=|https?:\/\//i);
    // The admin key field has no name: even a form sent without the script carries no key.
    expect(text).toMatch(/<input id="admin-key" type="password"/);
    expect(text).not.toMatch(/name="admin-key"/);
  });

  it('imports only modules it serves, each by a relative path on this origin', async () => {
    const base = servers.get('hono')!.url;
    for (const path of SCRIPTS) {
      const { text } = await call(base, path);
      const imports = [...text.matchAll(/^import\b[^;]*?from '([^']+)';$/gm)].map(([, from]) => from!);
      for (const from of imports) {
        expect(from, `${path} imports ${from}`).toMatch(/^\.\/[a-z-]+\.js$/);
        expect(SCRIPTS, `${path} imports ${from}`).toContain(`/console/${from.slice(2)}`);
      }
    }
  });

  it('keeps the admin key out of URLs, cookies and the console log', async () => {
    const base = servers.get('hono')!.url;
    const text = (await Promise.all(SCRIPTS.map(async (path) => (await call(base, path)).text))).join('\n');
    expect(text).toContain('sessionStorage');
    // Its API calls keep nothing in the HTTP cache (an issue or rotate answer holds a key).
    expect(text).toContain("cache: 'no-store'");
    expect(text).not.toMatch(/document\.cookie|localStorage|console\.(log|info|debug|warn|error)|innerHTML|outerHTML|insertAdjacentHTML|document\.write|\beval\(|new Function/);
  });

  it('is on no other path: /console/ and other files under it are 404', async () => {
    const base = servers.get('hono')!.url;
    for (const path of ['/console/', '/console/index.html', '/console/app.ts', '/console/../console.ts']) {
      const reply = await call(base, path);
      expect([400, 404], path).toContain(reply.status);
    }
  });
});
