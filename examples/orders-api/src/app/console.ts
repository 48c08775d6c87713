/**
 * `/console`: a small operators' page over the admin routes (keys, owners, usage, audit).
 * Its files live in `src/app/console/` and are read from disk on each request (a few
 * KiB, and an edited file shows on the next reload without a restart). The script is a set
 * of ES modules the browser loads as they are, no build step: `app.js` imports the rest. Every answer carries
 * the same headers: a Content-Security-Policy that allows this origin's script, style and
 * `fetch` only, so the page fetches nothing from elsewhere and runs no inline script, even
 * if a key's name or metadata held markup (the page writes API text as text anyway).
 * @module
 */
import { readFile } from 'node:fs/promises';

/** Paths of the console page and its assets. */
export const CONSOLE_PATHS = Object.freeze({ page: '/console', script: '/console/app.js', style: '/console/app.css', icon: '/console/icon.svg' });

/**
 * What the page may load and do: script, style and API calls from this origin only; no
 * plugin, frame, form submission, `<base>` or framing by another site.
 */
export const CONSOLE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/**
 * The modules `app.js` imports, served beside it under `/console/`. Only the files listed
 * here are served: a new module is added to this list.
 */
export const CONSOLE_MODULES: readonly string[] = Object.freeze([
  'api.js',
  'audit.js',
  'dom.js',
  'format.js',
  'key-actions.js',
  'key-detail.js',
  'keys-list.js',
  'owners.js',
  'roles.js',
  'usage.js',
  'usage-chart.js',
]);

/** One file of the console: where it is served, which file it is, and how. */
export interface ConsoleFile {
  path: string;
  file: string;
  contentType: string;
  /**
   * The page is `no-store` (nothing of a session should outlive the tab, and a new version
   * shows at once); the assets are `no-cache`: kept, but checked before each use, so a
   * script and a page of two versions never meet.
   */
  cacheControl: string;
}

/** The console's files. */
export const CONSOLE_FILES: readonly ConsoleFile[] = Object.freeze([
  { path: CONSOLE_PATHS.page, file: 'index.html', contentType: 'text/html; charset=utf-8', cacheControl: 'no-store' },
  { path: CONSOLE_PATHS.script, file: 'app.js', contentType: 'text/javascript; charset=utf-8', cacheControl: 'no-cache' },
  // A module script must come with a JavaScript type (HTML's "fetch a single module script").
  ...CONSOLE_MODULES.map((file) => ({ path: `/console/${file}`, file, contentType: 'text/javascript; charset=utf-8', cacheControl: 'no-cache' })),
  { path: CONSOLE_PATHS.style, file: 'app.css', contentType: 'text/css; charset=utf-8', cacheControl: 'no-cache' },
  // Served here: without an icon the browser asks for `/favicon.ico`, and a `data:` one
  // would need `img-src data:`.
  { path: CONSOLE_PATHS.icon, file: 'icon.svg', contentType: 'image/svg+xml', cacheControl: 'no-cache' },
]);

/** The headers of a console file's answer. */
export function consoleHeaders(file: ConsoleFile): Record<string, string> {
  return {
    'content-type': file.contentType,
    'cache-control': file.cacheControl,
    'content-security-policy': CONSOLE_CSP,
    // A browser must not run the script or style under another type than the one sent.
    'x-content-type-options': 'nosniff',
    // The page's address never travels to another site, and no other site frames it.
    'referrer-policy': 'no-referrer',
    'x-frame-options': 'DENY',
    'cross-origin-opener-policy': 'same-origin',
    'cross-origin-resource-policy': 'same-origin',
  };
}

/** A console file's body and headers. */
export async function readConsoleFile(file: ConsoleFile): Promise<{ body: Buffer; headers: Record<string, string> }> {
  const body = await readFile(new URL(`./console/${file.file}`, import.meta.url));
  return { body, headers: consoleHeaders(file) };
}
