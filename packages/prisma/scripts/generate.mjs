// Generates the Prisma Clients the tests use (src/testing/generated/*) from the schemas
// beside them, offline. `prisma generate` needs no engine binary with the `prisma-client`
// generator (the Rust-free client), but the CLI looks for the schema engine before any
// command and downloads it when absent, which fails without internet access. Generating
// never runs that engine, so any existing file stands in for it.
// `node scripts/generate.mjs [folder]`: the schemas' folder (default src/testing), where
// each client is written beside its schema (`output` in the schema).
import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const pkg = fileURLToPath(new URL('..', import.meta.url));
const folder = resolve(pkg, process.argv[2] ?? 'src/testing');
const cli = resolve(pkg, 'node_modules/prisma/build/index.js');
const env = { ...process.env, PRISMA_HIDE_UPDATE_MESSAGE: '1', CHECKPOINT_DISABLE: '1' };
env.PRISMA_SCHEMA_ENGINE_BINARY ??= fileURLToPath(import.meta.url);
for (const schema of ['postgres.prisma', 'sqlite.prisma']) {
  const run = spawnSync(process.execPath, [cli, 'generate', '--schema', resolve(folder, schema)], { cwd: pkg, env, stdio: 'inherit' });
  if (run.status !== 0) process.exit(run.status ?? 1);
}
