/**
 * Bundles a benchmark server against the BUILT packages (dist/, as users run them),
 * so no TypeScript loader sits in the measured process. Run `pnpm build` first
 * (`pnpm bench` does).
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

export async function bundleServer(entry: string, outfile: string): Promise<string> {
  const alias: Record<string, string> = {};
  for (const pkg of ['core', 'hono', 'express', 'fetch']) {
    const dist = join(root, 'packages', pkg, 'dist', 'index.js');
    if (!existsSync(dist)) throw new Error(`${dist} is missing: run \`pnpm build\` first`);
    alias[`@keyset/${pkg}`] = dist;
  }
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
  });
  return out;
}
