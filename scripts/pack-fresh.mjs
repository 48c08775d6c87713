#!/usr/bin/env node
// `pnpm pack:fresh`: the tarballs from a fresh clone, installing only what the build needs.
// The install takes the published packages' own dependencies (`--prod`: none of the test
// runtimes, Next.js, the browser driver or vitest a full install brings) and those of the
// private project tools/pack, the build toolchain: tsup, TypeScript and the peers whose
// types the adapters' declarations are built against (@keyset/prisma's peer @prisma/client
// is no devDependency of it, so pnpm installs it as a peer, --prod or not, and
// .pnpmfile.cjs keeps Prisma's CLI from coming with it). Those are hoisted to the root's
// node_modules (`public-hoist-pattern`, by name), where the packages' `build` scripts and
// their imports find them; all of them are root devDependencies too, so a later full
// install leaves no link behind that it would not have made itself. Then `pack:all`
// builds and packs into `.packs/` as usual; `--install-only` stops after the install
// (test/pack-fresh.test.ts measures it so on every run).
// Decision and figures: docs/packaging.md, "Tarballs from a fresh clone".
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const PNPM = ['-y', 'pnpm@10.34.9'];

/** The arguments of the build-only `pnpm install` (after `pnpm`). */
function installArgs() {
  const toolchain = JSON.parse(readFileSync(join(root, 'tools', 'pack', 'package.json'), 'utf8'));
  const excluded = readdirSync(join(root, 'packages'))
    .map((dir) => JSON.parse(readFileSync(join(root, 'packages', dir, 'package.json'), 'utf8')))
    .filter((manifest) => manifest.private === true)
    .map((manifest) => `!${manifest.name}`);
  const filters = [toolchain.name, './packages/*', ...excluded].flatMap((filter) => ['--filter', filter]);
  const hoisted = Object.keys(toolchain.dependencies).map((name) => `--config.public-hoist-pattern=${name}`);
  return ['install', ...filters, '--prod', ...hoisted];
}

const unknown = process.argv.slice(2).filter((arg) => arg !== '--install-only');
if (unknown.length > 0) {
  console.error(`pack:fresh takes no argument but --install-only (got ${unknown.join(' ')}); to pack into another folder, run pack:all <folder> after it`);
  process.exit(2);
}
// pnpm's own npm_config_* settings, passed down to this script, make npx warn "Unknown env
// config" for each; the pinned pnpm reads the workspace's settings itself. `offline` is
// kept: a run told to stay offline (the test, from the store) stays so.
const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('npm_config_') || name === 'npm_config_offline'));
execFileSync('npx', [...PNPM, ...installArgs()], { cwd: root, env, stdio: 'inherit' });
if (!process.argv.includes('--install-only')) execFileSync('npx', [...PNPM, 'pack:all'], { cwd: root, env, stdio: 'inherit' });
