// Two optional peers that no code here uses, removed from their packages' manifests when
// pnpm resolves them. pnpm links an optional peer to a copy it finds anywhere in the
// workspace, and Prisma's CLI (`prisma`, a devDependency of @keyset/prisma: it generates the
// tests' clients) brings Prisma Studio, React and about a hundred packages more. So
// @prisma/client (its optional peer `prisma`, for the old generator's postinstall) and
// drizzle-orm (`prisma` and `@prisma/client`, for its Prisma extension) took the CLI into
// every install that has them: the build-only install of `pack:fresh` among them, which
// needs @prisma/client's types and drizzle-orm's only. An override (`>prisma: '-'`)
// cannot do it: it removes the peer from `peerDependencies`, and pnpm reads an optional
// peer from `peerDependenciesMeta` alone. docs/packaging.md, "Tarballs from a fresh clone".
const UNUSED_OPTIONAL_PEERS = {
  '@prisma/client': ['prisma'],
  'drizzle-orm': ['prisma', '@prisma/client'],
};

function readPackage(manifest) {
  for (const peer of UNUSED_OPTIONAL_PEERS[manifest.name] ?? []) {
    if (manifest.peerDependencies) delete manifest.peerDependencies[peer];
    if (manifest.peerDependenciesMeta) delete manifest.peerDependenciesMeta[peer];
  }
  return manifest;
}

module.exports = { hooks: { readPackage } };
