/**
 * `/docs` in a real headless Chromium (Debian's `chromium`, driven by playwright-core), on
 * each of the four servers: the page renders the OpenAPI document and shows the orders
 * operation, and loads nothing from another origin. One database and one browser serve all
 * four (`serveAlso`, a page each). `.ci/run` installs the browser; without it the test
 * skips with a message here, and fails under CI=true.
 */
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';
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

describe.skipIf(!hasBrowser)('/docs in headless Chromium', () => {
  let t: TestApi;
  let browser: Browser;
  const servers = new Map<AdapterName, ExtraServer>();
  beforeAll(async () => {
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

  it.each(ADAPTERS)('renders the API reference with the orders operation, fetching nothing from elsewhere (%s)', async (adapter) => {
    const { url } = servers.get(adapter)!;
    const page = await browser.newPage();
    const origin = new URL(url).origin;
    const foreign: string[] = [];
    await page.route('**/*', (route) => {
      const url = route.request().url();
      if (url.startsWith('data:') || url.startsWith('blob:') || new URL(url).origin === origin) return route.continue();
      foreign.push(url);
      return route.abort();
    });
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    const response = await page.goto(`${url}/docs`);
    expect(response?.status()).toBe(200);
    // Scalar renders each operation's summary; the orders one is the API's main route.
    await page.getByText('List orders, newest first').first().waitFor({ timeout: 30_000 });
    await expect(page.getByText('/api/orders').first().isVisible()).resolves.toBe(true);
    expect(await page.title()).toBe('orders API reference');
    expect(errors).toEqual([]);
    expect(foreign).toEqual([]);
    await page.close();
  }, 90_000);
});
