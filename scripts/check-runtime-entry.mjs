#!/usr/bin/env node
// After `pnpm build`: checks that the built @keyset/core picks node:crypto on Node and Web
// Crypto elsewhere through its `#crypto` import condition, both when Node loads dist/
// directly and when a bundler (esbuild) resolves it for each platform. A stray condition
// (e.g. a `types` entry, which esbuild matches) once made Node bundles use Web Crypto.
// Since the packages ship one file per module, the root entry also reaches crypto.web.js
// for its `webCrypto` export, so the check follows the `#crypto` import itself.
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
  const picked = Object.values(result.metafile.inputs)
    .flatMap((input) => input.imports)
    .filter((record) => record.original === '#crypto')
    .map((record) => record.path);
  const ok = picked.length > 0 && picked.every((path) => path.endsWith(expected));
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
console.log(`ok   node runtime: dist/index.js loads and signs; ${defaultCrypto.name} provider decodes it (${decoded.position?.[0]})`);
// The second entry loads from both module systems and shares the root entry's modules
// (one file per module: a guard made through one entry is recognised by the other).
const adapter = await import(join(core, 'dist', 'adapter.js'));
const guard = viaNode.createApiKeyGuard({ keyring: viaNode.createKeyring({ store: viaNode.createMemoryKeyStore(), prefix: 'chk' }) });
const { createRequire } = await import('node:module');
const adapterCjs = createRequire(import.meta.url)(join(core, 'dist', 'adapter.cjs'));
const same = adapter.guardReadsForwardedFor(guard) === false && typeof adapterCjs.guardReadsForwardedFor === 'function';
console.log(`${same ? 'ok  ' : 'FAIL'} @keyset/core/adapter loads as ESM and CommonJS and knows the root entry's guard`);
if (!same) failed++;
process.exit(failed ? 1 : 0);
