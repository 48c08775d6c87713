/**
 * `/console` in a real headless Chromium (Debian's `chromium`, driven by playwright-core),
 * used as an operator uses it: the admin key typed into its form with the keyboard, a key
 * found by name, its requests in the chart, its revocation confirmed with the keyboard
 * (the key is refused at once) and the revocation in its audit trail; a rotation shows the
 * new key once; a key named like markup shows as text; where the usage and audit routes
 * answer 404 (an older server, played by the browser's request routing), the page says
 * they are not available. All the while the page fetches
 * nothing from another origin, breaks no rule of its Content-Security-Policy, opens no
 * alert, and keeps the admin key out of URLs and cookies.
 * Screenshots of each step land in `examples/orders-api/test-artifacts/` (git-ignored).
 * One browser and one server serve every step. `.ci/run` installs the browser; without it
 * the test skips with a message here, and fails under CI=true.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page, type Route } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONSOLE_PATHS } from '../src/app/console.ts';
import { call, startApi, type TestApi } from './helpers.ts';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const hasBrowser = existsSync(CHROMIUM);
if (!hasBrowser) {
  const message = `${CHROMIUM} is missing: install it with \`apt-get install -y chromium\` (as .ci/run does) or set CHROMIUM_PATH`;
  if (process.env.CI === 'true') throw new Error(`CI=true and ${message}`);
  console.warn(`skipping the /console browser test: ${message}`);
}

const ARTIFACTS = fileURLToPath(new URL('../test-artifacts/', import.meta.url));
const VIEWPORT = { width: 1280, height: 900 };
/** Generous: two cores shared with other test files; each wait ends at its event. */
const UI_TIMEOUT = 30_000;
const MARKUP_NAME = '<img src=x onerror=alert(1)>';
const MARKUP_NOTE = '<script>alert(2)</script><b>bold</b>';

describe.skipIf(!hasBrowser)('/console in headless Chromium', () => {
  let t: TestApi;
  let browser: Browser;
  let base: string;
  let admin: string;
  let page: Page;
  /** Requests that left for another origin (aborted), and every URL the page asked for. */
  const foreign: string[] = [];
  const urls: string[] = [];
  /** Uncaught errors, console errors and warnings (Chromium logs a CSP refusal there too). */
  const problems: string[] = [];
  const violations: string[] = [];
  const dialogs: string[] = [];
  /** Admin routes this server does not have (usage, audit): their 404s are expected. */
  const missingRoutes: RegExp[] = [];

  async function issueKey(name: string, metadata: Record<string, string> = {}): Promise<{ id: string; key: string }> {
    const reply = await call(base, '/api/keys', { key: admin, method: 'POST', body: { name, scopes: ['orders:read'], metadata } });
    expect(reply.status).toBe(201);
    return reply.body as { id: string; key: string };
  }

  const ordersStatus = async (key: string): Promise<number> => (await call(base, '/api/orders?limit=1', { key })).status;
  /** Waits for the status line (its `aria-live` region) to read `text`. */
  const statusReads = (text: string | RegExp) => page.locator('#status', { hasText: text }).waitFor({ timeout: UI_TIMEOUT });
  const shot = (name: string) => page.screenshot({ path: `${ARTIFACTS}console-${name}.png`, fullPage: true });

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    // The server and the browser start side by side (neither needs the other to start).
    // Usage is flushed every 100 ms instead of every 5 s: the usage step below waits for
    // the flush, and a shorter interval ends that wait sooner without changing what it sees.
    const [started, launched] = await Promise.allSettled([
      startApi({ seedOrders: 20, usageFlushMs: 100 }),
      chromium.launch({
        executablePath: CHROMIUM,
        args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
      }),
    ]);
    // Kept whichever started, so afterAll closes it when the other failed.
    if (started.status === 'fulfilled') t = started.value;
    if (launched.status === 'fulfilled') browser = launched.value;
    if (started.status === 'rejected') throw started.reason;
    if (launched.status === 'rejected') throw launched.reason;
    base = t.api.url;
    admin = t.api.adminKey!;
    page = await browser.newPage({ viewport: VIEWPORT });
    const origin = new URL(base).origin;
    await page.route('**/*', (route) => {
      const url = route.request().url();
      urls.push(url);
      if (url.startsWith('data:') || new URL(url).origin === origin) return route.continue();
      foreign.push(url);
      return route.abort();
    });
    page.on('pageerror', (error) => problems.push(`pageerror: ${error.message}`));
    page.on('console', (message) => {
      if (message.type() !== 'error' && message.type() !== 'warning') return;
      // Chromium logs each 404 answer; the only ones allowed are those of a route this server lacks.
      const path = new URL(message.location().url || base).pathname;
      if (/^Failed to load resource: .* 404 /.test(message.text()) && missingRoutes.some((pattern) => pattern.test(path))) return;
      problems.push(`${message.type()}: ${message.text()} (${path})`);
    });
    page.on('dialog', (dialog) => {
      dialogs.push(`${dialog.type()}: ${dialog.message()}`);
      void dialog.dismiss();
    });
    // The listener is added by the test harness, outside the page's policy.
    await page.exposeFunction('reportViolation', (text: string) => void violations.push(text));
    await page.addInitScript(() => {
      document.addEventListener('securitypolicyviolation', (event) => {
        (window as unknown as { reportViolation(text: string): void }).reportViolation(`${event.violatedDirective} ${event.blockedURI}`);
      });
    });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await t?.stop({ remove: true });
  });

  it('signs in by keyboard, finds a key by name, shows its requests, revokes it by keyboard and shows that in its audit trail', async () => {
    const name = `console target ${Date.now().toString(36)}`;
    const target = await issueKey(name);
    for (let i = 0; i < 3; i += 1) expect(await ordersStatus(target.key)).toBe(200);
    // One refusal: the key lacks the reports scope.
    expect((await call(base, '/api/reports/daily', { key: target.key })).status).toBe(403);
    await issueKey('console bystander');
    // A role the key holds: the console lists it and shows it, and what it grants, on the key.
    expect((await call(base, '/api/roles', { key: admin, method: 'POST', body: { name: 'console-viewer', permissions: ['billing:read'], description: 'sees bills' } })).status).toBe(201);
    expect((await call(base, `/api/keys/${target.id}/roles`, { key: admin, method: 'PUT', body: { roles: ['console-viewer'] } })).status).toBe(200);

    const response = await page.goto(`${base}${CONSOLE_PATHS.page}`);
    expect(response?.status()).toBe(200);
    // The key form has the focus: type the key, Tab to the button, Enter.
    await page.waitForFunction(() => document.activeElement?.id === 'admin-key', undefined, { timeout: UI_TIMEOUT });
    await page.keyboard.type(admin);
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Use this key');
    await page.keyboard.press('Enter');
    await statusReads(/^Signed in: \d+ keys? and \d+ owners? loaded\.$/);
    // The key is in this tab's sessionStorage, and nowhere a URL or a cookie would carry it.
    expect(await page.evaluate(() => sessionStorage.getItem('keyset-console:admin-key'))).toBe(admin);
    expect(await page.evaluate(() => document.cookie)).toBe('');
    expect(await page.inputValue('#admin-key')).toBe('');
    await shot('signed-in');

    // Find it by name: the search box has the focus after signing in.
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('key-search');
    await page.keyboard.type('console target');
    const rows = page.locator('#keys-table tbody tr');
    await expect.poll(() => rows.count(), { timeout: UI_TIMEOUT }).toBe(1);
    await page.getByRole('button', { name, exact: true }).click();
    await page.getByRole('heading', { name: `Key: ${name}` }).waitFor({ timeout: UI_TIMEOUT });
    const fields = await page.locator('#key-fields').innerText();
    expect(fields).toContain(target.id);
    expect(fields).toContain('orders:read');
    expect(fields).toMatch(/Leak record\s+none reported/);
    expect(fields).toMatch(/Roles\s+console-viewer/);
    expect(fields).toMatch(/Permissions\s+orders:read, billing:read/);
    expect(await page.locator('#roles-table').innerText()).toMatch(/console-viewer\s+billing:read\s+sees bills/);

    // Its requests: three allowed and one refused in the last day's chart. Usage is counted
    // in memory and flushed a moment after the requests: the operator presses "Refresh
    // usage" until they show.
    const summary = page.locator('#usage-summary');
    await expect
      .poll(async () => {
        const text = await summary.innerText();
        if (!/3 allowed, 1 refused/.test(text)) await page.getByRole('button', { name: 'Refresh usage' }).click();
        return text;
      }, { timeout: UI_TIMEOUT, interval: 200 })
      .toBe('Last day, by hour: 3 allowed, 1 refused (insufficient_scope 1).');
    // The bars add up to the same (one bar, or two when the requests straddled an hour).
    expect(await page.locator('#usage-chart svg rect.allowed').count()).toBeGreaterThanOrEqual(1);
    expect(await page.locator('#usage-chart svg rect.refused').count()).toBe(1);
    const bars = (await page.locator('#usage-chart svg g.bucket title').allTextContents()).map((title) => / UTC: (\d+) allowed, (\d+) refused$/.exec(title));
    expect(bars.every((bar) => bar !== null)).toBe(true);
    expect(bars.reduce((sum, bar) => [sum[0]! + Number(bar![1]), sum[1]! + Number(bar![2])], [0, 0])).toEqual([3, 1]);
    // The month, by day, holds the same requests.
    await page.locator('#usage-period').selectOption('month');
    await page.locator('#usage-summary', { hasText: 'Last month, by day: 3 allowed, 1 refused (insufficient_scope 1).' }).waitFor({ timeout: UI_TIMEOUT });
    expect(await page.locator('#usage-chart svg g.bucket').count()).toBeGreaterThanOrEqual(30);
    await shot('key-usage');

    // Revoke, by keyboard: Escape first cancels (nothing revoked), then Shift+Tab from
    // "Cancel" (which has the focus) to "Revoke key", and Enter.
    const revokeOpen = page.getByRole('button', { name: 'Revoke key…' });
    await revokeOpen.focus();
    await page.keyboard.press('Enter');
    const dialog = page.getByRole('dialog', { name: 'Revoke this key?' });
    await dialog.waitFor({ timeout: UI_TIMEOUT });
    expect(await dialog.innerText()).toContain(name);
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('revoke-cancel');
    await shot('revoke-confirm');
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'hidden', timeout: UI_TIMEOUT });
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('revoke-open');
    expect(await ordersStatus(target.key)).toBe(200);
    await page.keyboard.press('Enter');
    await dialog.waitFor({ timeout: UI_TIMEOUT });
    await page.keyboard.press('Shift+Tab');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('revoke-confirm');
    await page.keyboard.press('Enter');
    await statusReads(`Key ${name} revoked: requests with it are refused from now on.`);
    // Refused at once, not after a cache's lifetime.
    expect(await ordersStatus(target.key)).toBe(401);
    expect(await page.locator('#key-fields').innerText()).toMatch(/State\s+revoked /);
    expect(await revokeOpen.isDisabled()).toBe(true);

    // The revocation is in the key's audit trail, newest first, above its role and its issue.
    const audit = page.locator('#audit-list > li');
    await expect.poll(() => audit.count(), { timeout: UI_TIMEOUT }).toBe(3);
    // Made with the admin key: the actor shows as that key's name, beside its id.
    expect(await audit.nth(0).innerText()).toMatch(/ key\.revoked by "admin \(created on first start\)" \(key_\w+\)\s+revokedAt: null → "\d{4}-/);
    expect(await page.locator('#audit-summary').innerText()).toBe('3 entries, newest first.');
    expect(await audit.nth(1).innerText()).toContain('key.roles_set');
    expect(await audit.nth(2).innerText()).toContain('key.issued');
    await shot('revoked');

    expect(urls.filter((url) => url.includes(admin))).toEqual([]);
    expect({ foreign, problems, violations, dialogs }).toEqual({ foreign: [], problems: [], violations: [], dialogs: [] });
  }, 120_000);

  it('shows a key named like markup (and its metadata) as text, a rotated or issued key once, and forgets the admin key', async () => {
    const marked = await issueKey(MARKUP_NAME, { note: MARKUP_NOTE });
    await page.getByRole('button', { name: 'Reload keys' }).click();
    await statusReads(/keys? loaded\.$/);
    await page.getByLabel('Search keys by name, id or last 4').fill('<img');
    const open = page.getByRole('button', { name: MARKUP_NAME, exact: true });
    await open.waitFor({ timeout: UI_TIMEOUT });
    // As on a server without the usage and audit routes (they answer 404 here): the key
    // still opens, and the page says what it cannot show.
    const missing = [/^\/api\/keys\/[^/]+\/usage$/, /^\/api\/audit$/];
    missingRoutes.push(...missing);
    const notFound = (route: Route) =>
      route.fulfill({ status: 404, contentType: 'application/problem+json', body: JSON.stringify({ type: 'about:blank', title: 'Not Found', status: 404, code: 'not_found' }) });
    const isMissing = (url: URL) => missing.some((pattern) => pattern.test(url.pathname));
    await page.route(isMissing, notFound);
    await open.click();
    await page.getByRole('heading', { name: `Key: ${MARKUP_NAME}` }).waitFor({ timeout: UI_TIMEOUT });
    await page.locator('#usage-summary', { hasText: 'Usage not available on this server.' }).waitFor({ timeout: UI_TIMEOUT });
    await page.locator('#audit-summary', { hasText: 'Audit trail not available on this server.' }).waitFor({ timeout: UI_TIMEOUT });
    expect(await page.locator('#usage-figure').isHidden()).toBe(true);
    await page.unroute(isMissing, notFound);
    missingRoutes.length = 0;
    expect(await page.locator('#key-fields').innerText()).toContain(JSON.stringify({ note: MARKUP_NOTE }));
    expect(await page.locator('img').count()).toBe(0);
    expect(await page.locator('b').count()).toBe(0);
    expect(await page.locator('script').count()).toBe(1);
    await shot('markup-name');

    // Rotate with no overlap: the new key is shown once, works, and the old one is refused.
    await page.getByLabel('Old key keeps working for (seconds)').fill('0');
    await page.getByRole('button', { name: 'Rotate key' }).click();
    const shown = page.locator('#new-key-value');
    await expect.poll(() => shown.textContent(), { timeout: UI_TIMEOUT }).not.toBe('');
    const rotated = (await shown.textContent())!;
    expect(rotated).not.toBe(marked.key);
    expect(await ordersStatus(rotated)).toBe(200);
    expect(await ordersStatus(marked.key)).toBe(401);
    // The real routes again: the rotation is in the key's audit trail.
    await page.locator('#audit-list').getByText('key.rotated').waitFor({ timeout: UI_TIMEOUT });
    await shot('rotated-key-shown-once');
    await page.getByRole('button', { name: 'I have copied it: hide the key' }).click();
    expect(await shown.textContent()).toBe('');
    expect(await page.locator('body').innerText()).not.toContain(rotated);

    // Issue through the form: the new key is shown once, and reads orders.
    await page.getByLabel('Name', { exact: true }).fill('console issued');
    await page.getByRole('button', { name: 'Issue key' }).click();
    await page.getByRole('heading', { name: 'Key: console issued' }).waitFor({ timeout: UI_TIMEOUT });
    await expect.poll(() => shown.textContent(), { timeout: UI_TIMEOUT }).not.toBe('');
    expect(await ordersStatus((await shown.textContent())!)).toBe(200);
    // Its trail holds one entry, worded so, by the admin key's name.
    await page.locator('#audit-summary', { hasText: '1 entry.' }).waitFor({ timeout: UI_TIMEOUT });
    expect(await page.locator('#audit-list > li').innerText()).toMatch(/ key\.issued by "admin \(created on first start\)" \(key_\w+\)/);
    await page.getByRole('button', { name: 'I have copied it: hide the key' }).click();

    // Forgetting the key leaves nothing in the tab; a reload then asks for it again.
    await page.getByRole('button', { name: 'Forget the key' }).click();
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
    await page.reload();
    await page.waitForFunction(() => document.activeElement?.id === 'admin-key', undefined, { timeout: UI_TIMEOUT });
    expect(await page.locator('#signed-in').isHidden()).toBe(true);

    expect(await page.locator('img').count()).toBe(0);
    expect(urls.filter((url) => url.includes(admin))).toEqual([]);
    expect({ foreign, problems, violations, dialogs }).toEqual({ foreign: [], problems: [], violations: [], dialogs: [] });
  }, 120_000);

  it("shows an owner's usage by its id, and says that keys of an earlier owner deleted under the id count too", async () => {
    const id = `cus_console_${Date.now().toString(36)}`;
    const send = (method: string, path: string, body?: unknown) => call(base, path, { key: admin, method, ...(body === undefined ? {} : { body }) });
    const issueFor = async (): Promise<string> => {
      const reply = await send('POST', '/api/keys', { name: `${id} key`, scopes: ['orders:read'], ownerId: id });
      expect(reply.status, reply.text).toBe(201);
      return reply.body.key;
    };
    // Two requests by a key of the first owner of the id, deleted; one by the owner created again.
    expect((await send('POST', '/api/owners', { id })).status).toBe(201);
    const first = await issueFor();
    for (let i = 0; i < 2; i += 1) expect(await ordersStatus(first)).toBe(200);
    expect((await send('DELETE', `/api/owners/${id}`)).status).toBe(204);
    expect((await send('POST', '/api/owners', { id })).status).toBe(201);
    expect(await ordersStatus(await issueFor())).toBe(200);

    await page.goto(`${base}${CONSOLE_PATHS.page}`);
    await page.waitForFunction(() => document.activeElement?.id === 'admin-key', undefined, { timeout: UI_TIMEOUT });
    await page.keyboard.type(admin);
    await page.keyboard.press('Enter');
    await statusReads(/^Signed in: \d+ keys? and \d+ owners? loaded\.$/);
    await page.getByLabel('Search owners by id').fill(id);
    await page.getByRole('button', { name: `Show the usage of ${id}` }).click();
    await page.getByRole('heading', { name: `Owner: ${id}` }).waitFor({ timeout: UI_TIMEOUT });
    const note = await page.locator('#owner-usage-note').innerText();
    expect(note).toContain(`Usage is counted by owner id: it includes the requests of every key issued for ${id}, also keys of an earlier owner deleted under this id.`);
    expect(note).toMatch(/This owner was created \d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC\.$/);
    // Counted by id: the earlier owner's two requests and the new owner's one.
    const summary = page.locator('#owner-usage-summary');
    await expect
      .poll(async () => {
        const text = await summary.innerText();
        if (!/3 allowed/.test(text)) await page.locator('#reload-owner-usage').click();
        return text;
      }, { timeout: UI_TIMEOUT, interval: 200 })
      .toBe('Last day, by hour: 3 allowed, 0 refused.');
    expect(await page.locator('#owner-usage-chart svg rect.allowed').count()).toBeGreaterThanOrEqual(1);
    await shot('owner-usage');
    expect({ foreign, problems, violations, dialogs }).toEqual({ foreign: [], problems: [], violations: [], dialogs: [] });
  }, 120_000);

  it('names the actor of each audit entry by its key, also a key the page has not loaded', async () => {
    const target = await issueKey(`console audited ${Date.now().toString(36)}`);
    const second = (await call(base, '/api/keys', { key: admin, method: 'POST', body: { name: 'console second admin', scopes: ['keys:admin'] } })).body as { id: string; key: string };
    expect((await call(base, `/api/keys/${target.id}`, { key: second.key, method: 'PATCH', body: { metadata: { team: 'audit' } } })).status).toBe(200);
    // The second admin key is left out of the key list the page loads, as past the newest
    // keys it searches: its name comes from the key itself.
    const isList = (url: URL) => url.pathname === '/api/keys' && url.searchParams.get('limit') === '100';
    const withoutSecond = async (route: Route) => {
      const response = await route.fetch();
      const body = (await response.json()) as { items: { id: string }[] };
      await route.fulfill({ response, json: { ...body, items: body.items.filter((item) => item.id !== second.id) } });
    };
    await page.route(isList, withoutSecond);
    // Still signed in from the test before (this tab keeps the key): a reload signs in again.
    await page.goto(`${base}${CONSOLE_PATHS.page}`);
    await statusReads(/^Signed in: \d+ keys? and \d+ owners? loaded\.$/);
    await page.getByLabel('Search keys by name, id or last 4').fill(target.id);
    await page.getByRole('button', { name: 'console audited', exact: false }).click();
    await page.locator('#audit-summary', { hasText: '2 entries, newest first.' }).waitFor({ timeout: UI_TIMEOUT });
    const entries = await page.locator('#audit-list > li').allInnerTexts();
    expect(entries[0]).toContain(`key.updated by "console second admin" (${second.id})`);
    expect(entries[1]).toMatch(/ key\.issued by "admin \(created on first start\)" \(key_\w+\)/);
    await page.unroute(isList, withoutSecond);
    expect({ foreign, problems, violations, dialogs }).toEqual({ foreign: [], problems: [], violations: [], dialogs: [] });
  }, 120_000);
});
