/**
 * An esbuild plugin that resolves `@keyset/<name>[/<entry>]` inside this repository, for
 * the benchmarks that bundle code (the HTTP servers, the bundle-size measurements).
 *
 * `from: 'dist'` follows each package's `exports` map (import condition) to its built
 * file, as a consumer's bundler does, so a new entry such as `@keyset/core/adapter`
 * resolves without a list to keep in step; it needs `pnpm build`. `from: 'src'` maps the
 * same specifiers to the package's TypeScript sources and `#crypto` to the provider of
 * the target platform, which needs no build (the smoke runs use it).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Plugin } from 'esbuild';
import { ROOT } from '../settings.ts';

export type Source = 'dist' | 'src';

const PACKAGE = /^@keyset\/([a-z-]+)(?:\/([a-z-]+))?$/;

interface Manifest {
  exports: Record<string, string | { import?: { default?: string } }>;
}

export function resolveKeyset(from: Source, platform: 'node' | 'neutral'): Plugin {
  return {
    name: `keyset-${from}`,
    setup(b) {
      b.onResolve({ filter: PACKAGE }, (args) => {
        const [, name, entry] = PACKAGE.exec(args.path)!;
        const dir = join(ROOT, 'packages', name!);
        if (from === 'src') {
          const file = join(dir, 'src', `${entry ?? 'index'}.ts`);
          return existsSync(file) ? { path: file } : { errors: [{ text: `${args.path}: no ${file}` }] };
        }
        const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as Manifest;
        const target = manifest.exports[entry === undefined ? '.' : `./${entry}`];
        const file = typeof target === 'string' ? target : target?.import?.default;
        if (file === undefined) return { errors: [{ text: `${args.path} is not exported by packages/${name}/package.json` }] };
        const path = join(dir, file);
        if (!existsSync(path)) return { errors: [{ text: `${path} is missing: run \`pnpm build\` first` }] };
        return { path };
      });
      // Sources only: `#crypto` as core's `imports` map resolves it on this platform (the
      // built files carry the map in their package.json, which esbuild reads itself).
      if (from === 'src') {
        const provider = platform === 'node' ? 'crypto.node.ts' : 'crypto.web.ts';
        b.onResolve({ filter: /^#crypto$/ }, () => ({ path: join(ROOT, 'packages', 'core', 'src', 'crypto', provider) }));
      }
    },
  };
}
