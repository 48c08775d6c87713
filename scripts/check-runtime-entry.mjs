#!/usr/bin/env node
// After `pnpm build`: checks that the built @keyset/core picks node:crypto on Node and Web
// Crypto elsewhere through its `#crypto` import condition, both when Node loads dist/
// directly and when a bundler (esbuild) resolves it for each platform. A stray condition
// (e.g. a `types` entry, which esbuild matches) once made Node bundles use Web Crypto.
import { build } from 'esbuild';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const core = join(dirname(fileURLToPath(import.meta.url)), '..', 'packages', 'core');
let failed = 0;

for (const [platform, format, expected] of [
  ['node', 'esm', 'crypto.node.js'],
  ['node', 'cjs', 'crypto.node.cjs'],
  ['browser', 'esm', 'crypto.web.js'],
  ['neutral', 'esm', 'crypto.web.js'],
]) {
  const entry = format === 'cjs' ? 'dist/index.cjs' : 'dist/index.js';
  const result = await build({
    entryPoints: [join(core, entry)],
    bundle: true,
    platform,
    format,
    write: false,
    metafile: true,
    logLevel: 'silent',
    // Resolve as a consumer does: the published package has no tsconfig (whose `paths` would win).
    tsconfigRaw: '{}',
    external: ['node:*'],
    ...(platform === 'neutral' ? { mainFields: ['module', 'main'], conditions: ['import'] } : {}),
  });
  const providers = Object.keys(result.metafile.inputs).filter((f) => /crypto\.(node|web)\.(c?js|ts)$/.test(f));
  const picked = providers.filter((f) => f.includes('/crypto/'));
  const ok = picked.length === 1 && picked[0].endsWith(expected);
  console.log(`${ok ? 'ok  ' : 'FAIL'} esbuild platform=${platform} format=${format}: ${picked.join(', ') || 'no provider'}`);
  if (!ok) failed++;
}

const { defaultCrypto } = await import(join(core, 'dist', 'crypto', 'crypto.node.js'));
const viaNode = await import(`${join(core, 'dist', 'index.js')}`);
// The Node runtime resolves `#crypto` itself; its cursors must verify under the node provider.
const codec = viaNode.createCursorCodec({ secrets: ['check-runtime-entry-secret-0123456789'] });
const sort = [{ key: 'id', dir: 'asc', type: 'string', unique: true }];
const cursor = await codec.encode(['x'], 'fp', sort);
const nodeCodec = viaNode.createCursorCodec({ secrets: ['check-runtime-entry-secret-0123456789'], crypto: defaultCrypto });
const decoded = await nodeCodec.decode(cursor, 'fp', sort);
console.log(`ok   node runtime: dist/index.js loads and signs; ${defaultCrypto.name} provider decodes it (${decoded[0]})`);
process.exit(failed ? 1 : 0);
