/**
 * `/docs` in a real headless Chromium (Debian's `chromium`, driven by playwright-core), on
 * each of the four servers, used as a person uses it: the reference fills the first
 * screen (one copy, no loading skeleton), a key issued for the test goes into the page's
 * own auth field, "Test Request" then "Send" on `GET /api/orders` shows 200 with the
 * orders; a revoked key shows the 401 problem; the admin key sends `POST /api/keys` with the
 * body the form pre-fills and gets 201. The key goes out as
 * `Authorization: ApiKey <key>`, and nothing is fetched from (or sent to) another origin.
 * Screenshots of each step land in `examples/orders-api/test-artifacts/` (git-ignored).
 * One database and one browser serve all four servers (`serveAlso`). `.ci/run` installs
 * the browser; without it the test skips with a message here, and fails under CI=true.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADAPTERS, type AdapterName } from '../src/config.ts';
import { serveAlso, startApi, type ExtraServer, type TestApi } from './helpers.ts';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const hasBrowser = existsSync(CHROMIUM);
if (!hasBrowser) {
  const message = `${CHROMIUM} is missing: install it with \`apt-get install -y chromium\` (as .ci/run does) or set CHROMIUM_PATH`;
  if (process.env.CI === 'true') throw new Error(`CI=true and ${message}`);
  console.warn(`skipping the /docs browser test: ${message}`);
}

const ARTIFACTS = fileURLToPath(new URL('../test-artifacts/', import.meta.url));
const VIEWPORT = { width: 1280, height: 800 };
/** Generous: two cores shared with other test files; each wait ends at its event. */
const UI_TIMEOUT = 30_000;

interface Opened {
  page: Page;
  /** Requests that left for another origin (aborted). */
  foreign: string[];
  /** Uncaught errors, console errors and warnings. */
  problems: string[];
}

describe.skipIf(!hasBrowser)('/docs in headless Chromium', () => {
  let t: TestApi;
  let browser: Browser;
  const servers = new Map<AdapterName, ExtraServer>();

  /** Issues a key through the admin route, as the quick start does. */
  async function issueKey(base: string, name: string): Promise<{ id: string; key: string }> {
    const response = await fetch(`${base}/api/keys`, {
      method: 'POST',
      headers: { authorization: `ApiKey ${t.api.adminKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name, scopes: ['orders:read'] }),
    });
    expect(response.status).toBe(201);
    return (await response.json()) as { id: string; key: string };
  }

  async function open(base: string): Promise<Opened> {
    const page = await browser.newPage({ viewport: VIEWPORT });
    const origin = new URL(base).origin;
    const foreign: string[] = [];
    await page.route('**/*', (route) => {
      const url = route.request().url();
      if (url.startsWith('data:') || url.startsWith('blob:') || new URL(url).origin === origin) return route.continue();
      foreign.push(url);
      return route.abort();
    });
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(`pageerror: ${error.message}`));
    page.on('console', (message) => {
      if (message.type() === 'error' || message.type() === 'warning') problems.push(`${message.type()}: ${message.text()}`);
    });
    const response = await page.goto(`${base}/docs`);
    expect(response?.status()).toBe(200);
    // Scalar renders each operation's summary; the orders one is the API's main route.
    await page.getByText('List orders, newest first').first().waitFor({ timeout: UI_TIMEOUT });
    return { page, foreign, problems };
  }

  /**
   * What a person does: click the auth field (it holds `ApiKey `), paste or type the key,
   * press "Test Request" on the orders operation, then "Send". `replace` pastes over
   * the field's text instead of after it.
   */
  async function sendOrdersRequest(page: Page, key: string, replace = false): Promise<{ authorization: string | undefined; status: number; body: unknown }> {
    const field = page.getByRole('textbox', { name: 'Value' }).first();
    if (replace) await field.fill(key);
    else {
      await field.click();
      await field.press('End');
      await page.keyboard.type(key);
    }
    await page.getByRole('button', { name: /Test Request.*get \/api\/orders/is }).first().click();
    const [request, response] = await Promise.all([
      page.waitForRequest((request) => new URL(request.url()).pathname === '/api/orders', { timeout: UI_TIMEOUT }),
      page.waitForResponse((response) => new URL(response.url()).pathname === '/api/orders', { timeout: UI_TIMEOUT }),
      page.getByRole('button', { name: /^Send get request to \S*\/api\/orders$/i }).click(),
    ]);
    return { authorization: await request.headerValue('authorization') ?? undefined, status: response.status(), body: await response.json() };
  }

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    t = await startApi({ seedOrders: 20 });
    for (const adapter of ADAPTERS) servers.set(adapter, await serveAlso(t, adapter));
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
    });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await Promise.all([...servers.values()].map((server) => server.close()));
    await t?.stop({ remove: true });
  });

  it.each(ADAPTERS)('shows one API reference on the first screen, fetching nothing from elsewhere (%s)', async (adapter) => {
    const { page, foreign, problems } = await open(servers.get(adapter)!.url);
    await page.screenshot({ path: `${ARTIFACTS}docs-first-screen-${adapter}.png` });
    // One reference: Scalar's script once mounted a second, empty one whose skeleton
    // filled the first screen ("Document not found in configList").
    expect(await page.locator('.scalar-api-reference').count()).toBe(1);
    const heading = page.getByRole('heading', { name: 'orders API', exact: true });
    await expect(heading.isVisible()).resolves.toBe(true);
    const box = await heading.boundingBox();
    expect(box !== null && box.y + box.height <= VIEWPORT.height).toBe(true);
    await expect(page.getByText('/api/orders').first().isVisible()).resolves.toBe(true);
    expect(await page.title()).toBe('orders API reference');
    expect(problems).toEqual([]);
    expect(foreign).toEqual([]);
    await page.close();
  }, 90_000);

  it.each(ADAPTERS)('sends a key typed in the page\'s auth field as `ApiKey <key>` and shows the orders (%s)', async (adapter) => {
    const base = servers.get(adapter)!.url;
    const { key } = await issueKey(base, `docs ${adapter}`);
    const { page, foreign, problems } = await open(base);
    const sent = await sendOrdersRequest(page, key);
    expect(sent.authorization).toBe(`ApiKey ${key}`);
    expect(sent.status).toBe(200);
    const { items } = sent.body as { items: Array<{ id: number; customer: string }> };
    expect(items.length).toBeGreaterThan(0);
    // The page shows the answer: its status and the first order.
    await page.getByText('200 OK').first().waitFor({ timeout: UI_TIMEOUT });
    await page.getByText(`"${items[0]!.customer}"`).first().waitFor({ timeout: UI_TIMEOUT });
    // The code sample beside it is one a reader can copy: the same header, an absolute URL.
    const samples = await page.locator('pre').allInnerTexts();
    expect(samples.some((text) => text.includes(`Authorization: ApiKey ${key}`) && text.includes(`${base}/api/orders`))).toBe(true);
    await page.screenshot({ path: `${ARTIFACTS}docs-send-200-${adapter}.png` });
    expect(problems).toEqual([]);
    expect(foreign).toEqual([]);
    await page.close();
  }, 90_000);

  it('sends a key pasted over the field\'s text with the scheme put in front', async () => {
    const base = servers.get('hono')!.url;
    const { key } = await issueKey(base, 'docs pasted');
    const { page, foreign } = await open(base);
    const sent = await sendOrdersRequest(page, key, true);
    expect(sent.authorization).toBe(`ApiKey ${key}`);
    expect(sent.status).toBe(200);
    expect(foreign).toEqual([]);
    await page.close();
  }, 90_000);

  it('issues a key with the form as the page pre-fills it (201), and says what the admin key can do', async () => {
    const base = servers.get('hono')!.url;
    const { page, foreign, problems } = await open(base);
    // The description above the operations tells a newcomer the admin key cannot read orders.
    await page.getByText('manages keys and owners').first().waitFor({ timeout: UI_TIMEOUT });
    const field = page.getByRole('textbox', { name: 'Value' }).first();
    await field.click();
    await field.press('End');
    await page.keyboard.type(t.api.adminKey!);
    // The reference renders an operation when it is reached: go there as a reader does, from the sidebar.
    await page.locator('a[href="#tag/keys"]').first().click();
    await page.getByText('Issue a key (shown once, in this response)').first().click();
    const testRequest = page.getByRole('button', { name: /Test Request.*post \/api\/keys\)?$/is }).first();
    await testRequest.waitFor({ timeout: UI_TIMEOUT });
    await testRequest.click();
    const [request, response] = await Promise.all([
      page.waitForRequest((r) => new URL(r.url()).pathname === '/api/keys' && r.method() === 'POST', { timeout: UI_TIMEOUT }),
      page.waitForResponse((r) => new URL(r.url()).pathname === '/api/keys' && r.request().method() === 'POST', { timeout: UI_TIMEOUT }),
      page.getByRole('button', { name: /^Send post request to \S*\/api\/keys$/i }).click(),
    ]);
    const document = (await (await fetch(`${base}/openapi.json`)).json()) as { paths: Record<string, any> };
    const example = document.paths['/api/keys'].post.requestBody.content['application/json'].example;
    expect(JSON.parse(request.postData() ?? 'null')).toEqual(example);
    expect(response.status()).toBe(201);
    const issued = (await response.json()) as { key: string; scopes: string[] };
    expect(issued.scopes).toEqual(example.scopes);
    await page.getByText('201 Created').first().waitFor({ timeout: UI_TIMEOUT });
    await page.screenshot({ path: `${ARTIFACTS}docs-issue-key-201.png` });
    // The key the form issued reads orders.
    const orders = await fetch(`${base}/api/orders?limit=1`, { headers: { authorization: `ApiKey ${issued.key}` } });
    expect(orders.status).toBe(200);
    expect(foreign).toEqual([]);
    expect(problems).toEqual([]);
    await page.close();
  }, 90_000);

  it.each(ADAPTERS)('shows the 401 problem for a revoked key (%s)', async (adapter) => {
    const base = servers.get(adapter)!.url;
    const { id, key } = await issueKey(base, `docs revoked ${adapter}`);
    const revoked = await fetch(`${base}/api/keys/${id}`, { method: 'DELETE', headers: { authorization: `ApiKey ${t.api.adminKey}` } });
    expect(revoked.status).toBe(204);
    const { page, foreign } = await open(base);
    const sent = await sendOrdersRequest(page, key);
    expect(sent.authorization).toBe(`ApiKey ${key}`);
    expect(sent.status).toBe(401);
    expect(sent.body).toMatchObject({ status: 401, code: 'invalid_api_key' });
    await page.getByText('401 Unauthorized').first().waitFor({ timeout: UI_TIMEOUT });
    await page.getByText('"invalid_api_key"').first().waitFor({ timeout: UI_TIMEOUT });
    await page.screenshot({ path: `${ARTIFACTS}docs-send-401-${adapter}.png` });
    expect(foreign).toEqual([]);
    await page.close();
  }, 90_000);
});
