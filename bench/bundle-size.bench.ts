/**
 * Bundle size: what keyset adds to an application bundled for an edge runtime. Bundles
 * bench/bundle/minimal-fetch.ts (a keyring on a memory store, a guard, one paginator,
 * @keyset/fetch's apiKey/paginate/sendPage/problemHandler) and each of @keyset/core's
 * entries whole, with esbuild `--bundle --minify --platform=neutral`, from the built
 * packages as a consumer resolves them (`pnpm bench` builds first). Sizes are bytes
 * (1 KB = 1,000 bytes); deterministic for a given esbuild and source, so one run is enough.
 * Smoke mode (BENCH_SMOKE=1) bundles the sources instead, which needs no build.
 * Run: `npx -y pnpm@10.34.9 bench bundle-size`. The minimal handler's ceiling (MINIMAL_FETCH_LIMIT) is held by
 * test/bundle-size.test.ts.
 */
import { bundleSize, MINIMAL_FETCH, MINIMAL_FETCH_LIMIT, ROOT, wholeEntry, type BundleSize } from './bundle/measure.ts';
import { save, SMOKE } from './support.ts';

const cases: Array<[string, Parameters<typeof bundleSize>[0]]> = [
  ['minimal Fetch handler (bench/bundle/minimal-fetch.ts)', { entry: MINIMAL_FETCH }],
  ['@keyset/core root entry, every export', wholeEntry('@keyset/core')],
  ['@keyset/core/adapter, every export', wholeEntry('@keyset/core/adapter')],
  ['all of @keyset/core (both entries)', { contents: "export * from '@keyset/core'; export * from '@keyset/core/adapter';" }],
  ['@keyset/fetch, every export', wholeEntry('@keyset/fetch')],
];

const rows: Array<{ bundle: string; bytes: number; gzipBytes: number }> = [];
let minimal: BundleSize | undefined;
for (const [name, input] of cases) {
  const size = await bundleSize(input, SMOKE ? 'src' : 'dist');
  minimal ??= size;
  rows.push({ bundle: name, bytes: size.bytes, gzipBytes: size.gzipBytes });
}
console.table(rows.map((r) => ({ bundle: r.bundle, 'KB minified': (r.bytes / 1000).toFixed(1), 'KB gzip': (r.gzipBytes / 1000).toFixed(1) })));

const largest = minimal!.inputs.slice(0, 15).map((i) => ({ file: i.file.replace(`${ROOT}/`, ''), bytes: i.bytes }));
console.log('\nminimal handler, largest modules (minified bytes):');
console.table(largest);
console.log(`minimal handler: ${minimal!.bytes} bytes, ceiling ${MINIMAL_FETCH_LIMIT} (${minimal!.bytes <= MINIMAL_FETCH_LIMIT ? 'within' : 'OVER'})`);

save('bundle-size', { limit: MINIMAL_FETCH_LIMIT, rows, minimalLargest: largest });
