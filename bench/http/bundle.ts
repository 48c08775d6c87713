/**
 * Bundles a benchmark server. By default against the BUILT packages (dist/, as users run
 * them, resolved through each package's `exports` map, so every entry such as
 * `@keyset/core/adapter` resolves as a consumer's would), so no TypeScript loader sits in
 * the measured process; run `pnpm build` first (`pnpm bench` does). In smoke mode
 * (BENCH_SMOKE=1) against the sources, which needs no build.
 */
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { build } from 'esbuild';
import { resolveKeyset } from '../bundle/resolve-keyset.ts';
import { ROOT, SMOKE, TMP } from '../settings.ts';

export async function bundleServer(entry: string, outfile: string): Promise<string> {
  // A runtime dependency of the built Fastify adapter (not the repo root's), resolved from
  // its package as an installed application would, and bundled in.
  const fastifyRequire = createRequire(join(ROOT, 'packages', 'fastify', 'package.json'));
  const out = join(TMP, outfile);
  await build({
    entryPoints: [entry],
    outfile: out,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    // Third-party packages load from node_modules as in an application.
    packages: 'external',
    alias: { 'fastify-plugin': fastifyRequire.resolve('fastify-plugin') },
    plugins: [resolveKeyset(SMOKE ? 'src' : 'dist', 'node')],
    // As a consumer would resolve: no repo tsconfig `paths` pointing at sources.
    tsconfigRaw: '{}',
    logLevel: 'warning',
    // fastify-plugin is CommonJS and requires node: builtins: give the ESM bundle a require.
    banner: { js: "import { createRequire as __benchRequire } from 'node:module'; const require = __benchRequire(import.meta.url);" },
  });
  return out;
}
