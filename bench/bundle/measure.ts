/**
 * Bundle sizes as an application's bundler sees keyset: esbuild with `--bundle --minify
 * --platform=neutral` (a Worker, Deno or edge build: no Node built-ins, `#crypto` picks Web
 * Crypto). Used by `pnpm bench bundle-size` and test/bundle-size.test.ts.
 *
 * `from: 'dist'` resolves `@keyset/*` the way a consumer's bundler does, through each
 * package's `exports` (import condition) to the built files, so it needs `pnpm build`.
 * `from: 'src'` maps `@keyset/<name>[/<entry>]` to the package's TypeScript, which needs no
 * build; esbuild still reads each package's `sideEffects: false`, so module-level
 * tree-shaking is the same as over the one-file-per-module build.
 */
import { build, type Metafile } from 'esbuild';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { ROOT } from '../settings.ts';
import { resolveKeyset, type Source } from './resolve-keyset.ts';

export { ROOT };
export type { Source };

/** The minimal handler's entry (committed beside this file). */
export const MINIMAL_FETCH: string = join(ROOT, 'bench', 'bundle', 'minimal-fetch.ts');

/**
 * The ceiling the minimal handler is held to, in bytes (1 KB = 1,000 bytes), so that
 * test/bundle-size.test.ts catches growth: 102.8 KB today, what a verifying,
 * paginating request's default protections cost (docs/benchmarks.md, "Bundle size", lists
 * the modules). The request path written once, without synchronous twins, made room for the
 * opt-in credential schemes and the `Link` that keeps only declared parameters within 93.0
 * KB, and for the audit log (the memory key store, the minimal handler's store, writes a
 * change and its audit entry in one synchronous step, 0.3 KB) once the fingerprint cache
 * lost its second index (0.6 KB): 92.5 KB. Raised to 93.8 KB for exact walks at the
 * drivers' defaults (1.3 KB: `page()` refusing a sort value a driver rounded, a `Date` for
 * a microsecond timestamp or a number past 2^53 or for a decimal, with messages that name
 * the setting to change, and reading the exact values a query helper attaches), where a
 * page used to skip rows silently. Raised to 99.1 KB (99.0 from the sources, 99.1 built) for what the
 * same round added to every verifying request: roles and permission queries (the memory key
 * store keeps roles and grants, the verifier evicts a role's keys, `and`/`or` queries are
 * evaluated with the smallest missing set: about 3 KB), owner incarnations and the
 * delete-versus-issue step of the memory store, the safe request-id form, the one-call
 * request-store capability of the limiter, the keep-alive body check of early answers, and
 * the keyring's cache-lookup hook; then to 102.2 KB for the paginator's Relay slices
 * (`planSlice` and `slice`: a signed cursor per row for GraphQL connections, 1.8 KB in
 * paginator.ts and 0.8 KB in sort-values.ts), which every paginator carries; then to 103.2 KB
 * for shadow mode (0.9 KB: GCRA deciding observed pairs apart from enforced ones, the
 * `mode` of limits and quotas checked and copied by the key inputs and the memory key
 * store, and a quota's mode switched without restarting its count), and down to 102.9 KB once
 * the adapters rendered each refusal in one place (the Fetch adapter lost its second,
 * symbol-tagged path: 0.3 KB). Lower it as
 * the handler shrinks (slices in a module of their own, a key store without roles); never
 * raise it without saying why.
 */
export const MINIMAL_FETCH_LIMIT = 102_900;

export interface BundleSize {
  /** Minified bytes. */
  bytes: number;
  /** The same, gzip level 9 (what a CDN sends). */
  gzipBytes: number;
  /** Minified bytes per input file that kept any code, largest first (paths from the repo root). */
  inputs: Array<{ file: string; bytes: number }>;
  /** The minified bundle itself. */
  text: string;
}

/** Bundles `entry` (a file) or `contents` (module text) and measures the result. */
export async function bundleSize(input: { entry: string } | { contents: string }, from: Source): Promise<BundleSize> {
  const result = await build({
    ...('entry' in input ? { entryPoints: [input.entry] } : { stdin: { contents: input.contents, resolveDir: ROOT, loader: 'ts' as const } }),
    bundle: true,
    minify: true,
    platform: 'neutral',
    format: 'esm',
    write: false,
    metafile: true,
    logLevel: 'silent',
    // As a consumer resolves a published package: no repository tsconfig `paths`.
    tsconfigRaw: '{}',
    plugins: [resolveKeyset(from, 'neutral')],
  });
  const output = result.outputFiles[0]!.contents;
  const meta: Metafile = result.metafile;
  const inputs = Object.entries(Object.values(meta.outputs)[0]!.inputs)
    .map(([file, { bytesInOutput }]) => ({ file, bytes: bytesInOutput }))
    .filter((i) => i.bytes > 0)
    .sort((a, b) => b.bytes - a.bytes);
  return { bytes: output.length, gzipBytes: gzipSync(output, { level: 9 }).length, inputs, text: result.outputFiles[0]!.text };
}

/** Every run-time name of an entry, as one module that re-exports them all (nothing to shake). */
export function wholeEntry(specifier: string): { contents: string } {
  return { contents: `export * from '${specifier}';` };
}
