/**
 * `/docs`: the OpenAPI description rendered by Scalar's API reference, served from this
 * server (the bundle comes from the installed `@scalar/api-reference` package), so the
 * page fetches nothing from another origin at run time: default fonts are off too.
 * @module
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** Paths of the docs page, its script, and the document it renders. */
export const DOCS_PATHS = Object.freeze({ page: '/docs', script: '/docs/scalar.js', document: '/openapi.json' });

/**
 * The HTML of `/docs`.
 *
 * - The mount point is not `#api-reference`: Scalar's standalone script mounts a
 *   reference of its own on any element with that id as it loads (its `<script
 *   id="api-reference" data-url>` API). Beside ours that was an empty second copy, whose
 *   skeleton filled the first screen.
 * - The auth field starts as `ApiKey `, so a key typed after it makes the whole header
 *   value, in the request and in the code samples alike. A key pasted over it, without
 *   the scheme, still goes out as `Authorization: ApiKey <key>`: `onRequestBuilt` (a
 *   hook of Scalar's configuration that is handed the request about to be sent) puts the
 *   scheme in front of a value that has none.
 * - `servers` is this page's origin, so the code samples carry an absolute URL (the
 *   document itself has no `servers`: it is served on whatever origin the client reached).
 * - Nothing is fetched from another origin: no default fonts, telemetry, agent, MCP or
 *   developer-tools bar (their links lead to Scalar's services), no favicon request.
 */
export const DOCS_HTML = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <link rel="icon" href="data:,">
  <title>orders API reference</title>
</head>
<body>
  <div id="reference"></div>
  <script src="${DOCS_PATHS.script}"></script>
  <script>
    function withApiKeyScheme({ request }) {
      const value = (request.headers.get('authorization') || '').trim();
      if (value === '' || value.includes(' ') || value.toLowerCase() === 'apikey') return;
      request.headers.set('authorization', 'ApiKey ' + value);
    }
    Scalar.createApiReference('#reference', {
      url: '${DOCS_PATHS.document}',
      servers: [{ url: window.location.origin }],
      authentication: { preferredSecurityScheme: 'ApiKey', securitySchemes: { ApiKey: { value: 'ApiKey ' } } },
      onRequestBuilt: withApiKeyScheme,
      withDefaultFonts: false,
      hideClientButton: true,
      showDeveloperTools: 'never',
      telemetry: false,
      agent: { disabled: true },
      mcp: { disabled: true },
    });
  </script>
</body>
</html>
`;

let bundle: Buffer | undefined;

/** The bundle's `@font-face` sources on Scalar's font CDN. */
const FONT_CDN = /url\(https:\/\/fonts\.scalar\.com\/[a-z0-9-]+\.woff2\) format\("woff2"\)/g;

/**
 * Scalar's standalone browser bundle (read once, on the first request for it). Its CSS
 * loads the Inter and mono web fonts from Scalar's CDN whatever `withDefaultFonts` says;
 * those sources become `local()` ones, so the page uses installed fonts and fetches
 * nothing from another origin (checked in a real browser by test/docs-browser.test.ts).
 */
export function scalarBundle(): Buffer {
  // The package's exports do not list the browser bundle: resolve its entry, then step over.
  const file = fileURLToPath(new URL('./browser/standalone.js', import.meta.resolve('@scalar/api-reference')));
  bundle ??= Buffer.from(readFileSync(file, 'utf8').replace(FONT_CDN, 'local("Inter")'));
  return bundle;
}
