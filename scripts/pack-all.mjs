#!/usr/bin/env node
// Packs every published package (not the private ones) into one folder and prints the
// `npm install` line a project outside the repository runs to use them. `pnpm pack:all`
// builds first, then runs this; the folder is `.packs/` unless given as the argument
// (relative to the directory the command was started from).
// Packing with pnpm turns the `workspace:^` ranges into real versions, so the tarballs
// install like the published packages will.
import { execFileSync } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const destination = resolve(process.env.INIT_CWD ?? process.cwd(), process.argv[2] ?? join(root, '.packs'));

const manifests = readdirSync(join(root, 'packages')).map((dir) => ({ dir, ...JSON.parse(readFileSync(join(root, 'packages', dir, 'package.json'), 'utf8')) }));
const published = manifests.filter((manifest) => manifest.private !== true);
const excluded = manifests.filter((manifest) => manifest.private === true).map((manifest) => `!${manifest.name}`);
/** `@keyset/core` 0.1.0 → `keyset-core-0.1.0.tgz`, the name `pnpm pack` gives it. */
const tarball = (manifest) => `${manifest.name.replace('@', '').replace('/', '-')}-${manifest.version}.tgz`;

const unbuilt = published.filter((manifest) => !existsSync(join(root, 'packages', manifest.dir, 'dist', 'index.js')));
if (unbuilt.length > 0) {
  console.error(`${unbuilt.map((m) => m.name).join(', ')} not built: run \`npx -y pnpm@10.34.9 pack:all\`, which builds first`);
  process.exit(1);
}

mkdirSync(destination, { recursive: true });
// Tarballs of an earlier version would otherwise sit beside the new ones.
for (const file of readdirSync(destination)) {
  if (file.startsWith('keyset-') && file.endsWith('.tgz')) rmSync(join(destination, file));
}
// `pnpm pack` writes the version of every `workspace:` range, devDependencies included, and
// reads it from the linked package: the build-only install of `pack:fresh` links no
// devDependency, so the workspace ones (the private conformance suite) are linked here for
// the packing and removed after it.
const linked = [];
for (const manifest of published) {
  for (const [name, range] of Object.entries(manifest.devDependencies ?? {})) {
    const link = join(root, 'packages', manifest.dir, 'node_modules', name);
    const target = manifests.find((other) => other.name === name);
    if (!range.startsWith('workspace:') || target === undefined || existsSync(link)) continue;
    mkdirSync(dirname(link), { recursive: true });
    symlinkSync(relative(dirname(link), join(root, 'packages', target.dir)), link, 'dir');
    linked.push(link);
  }
}
const filters = ['./packages/*', ...excluded].flatMap((filter) => ['--filter', filter]);
// pnpm's own npm_config_* settings, passed down to this script, make npx warn
// "Unknown env config" for each; the pinned pnpm reads the workspace's settings itself.
const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('npm_config_')));
try {
  execFileSync('npx', ['-y', 'pnpm@10.34.9', '-r', ...filters, 'pack', '--pack-destination', destination], { cwd: root, env, stdio: ['ignore', 'ignore', 'inherit'] });
} finally {
  for (const link of linked) if (lstatSync(link).isSymbolicLink()) rmSync(link);
}

const files = published.map((manifest) => join(destination, tarball(manifest)));
const missing = files.filter((file) => !existsSync(file));
if (missing.length > 0) {
  console.error(`pnpm pack did not write ${missing.join(', ')}`);
  process.exit(1);
}
console.log(`Packed ${files.length} packages into ${destination}. In your project, install the ones you use (always with keyset-core; the frameworks come from npm as usual):\n`);
console.log(`npm install ${files.join(' ')}`);
