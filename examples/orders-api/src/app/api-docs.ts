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

/** The HTML of `/docs`. */
export const DOCS_HTML = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>orders API reference</title>
</head>
<body>
  <div id="api-reference"></div>
  <script src="${DOCS_PATHS.script}"></script>
  <script>
    Scalar.createApiReference('#api-reference', {
      url: '${DOCS_PATHS.document}',
      withDefaultFonts: false,
      hideClientButton: true,
      telemetry: false,
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
