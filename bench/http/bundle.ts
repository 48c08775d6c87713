/**
 * Bundles a benchmark server against the BUILT packages (dist/, as users run them),
 * so no TypeScript loader sits in the measured process. Run `pnpm build` first
 * (`pnpm bench` does).
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

export async function bundleServer(entry: string, outfile: string): Promise<string> {
  const alias: Record<string, string> = {};
  for (const pkg of ['core', 'hono', 'express', 'fetch', 'fastify']) {
    const dist = join(root, 'packages', pkg, 'dist', 'index.js');
    if (!existsSync(dist)) throw new Error(`${dist} is missing: run \`pnpm build\` first`);
    alias[`@keyset/${pkg}`] = dist;
  }
  // Runtime dependencies of the built adapters (not the repo root's), resolved from their
  // package as an installed application would, and bundled in.
  const fastifyRequire = createRequire(join(root, 'packages', 'fastify', 'package.json'));
  alias['fastify-plugin'] = fastifyRequire.resolve('fastify-plugin');
  const out = join(root, '.bench-tmp', outfile);
  await build({
    entryPoints: [entry],
    outfile: out,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    // Third-party packages load from node_modules as in an application.
    packages: 'external',
    alias,
    // As a consumer would resolve: no repo tsconfig `paths` pointing at sources.
    tsconfigRaw: '{}',
    logLevel: 'warning',
    // fastify-plugin is CommonJS and requires node: builtins: give the ESM bundle a require.
    banner: { js: "import { createRequire as __benchRequire } from 'node:module'; const require = __benchRequire(import.meta.url);" },
  });
  return out;
}
