// Generates the Prisma Clients the tests use (src/testing/generated/*) from the schemas
// beside them, offline. `prisma generate` needs no engine binary with the `prisma-client`
// generator (the Rust-free client), but the CLI looks for the schema engine before any
// command and downloads it when absent, which fails without internet access. Generating
// never runs that engine, so any existing file stands in for it.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const dir = fileURLToPath(new URL('..', import.meta.url));
const env = { ...process.env, PRISMA_HIDE_UPDATE_MESSAGE: '1' };
env.PRISMA_SCHEMA_ENGINE_BINARY ??= fileURLToPath(import.meta.url);
for (const schema of ['src/testing/postgres.prisma', 'src/testing/sqlite.prisma']) {
  const run = spawnSync(process.execPath, ['node_modules/prisma/build/index.js', 'generate', '--schema', schema], { cwd: dir, env, stdio: 'inherit' });
  if (run.status !== 0) process.exit(run.status ?? 1);
}
