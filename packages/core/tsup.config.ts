import { defineConfig } from 'tsup';
import { packageBuild } from '../../tsup.shared.ts';

// index.node.ts is not a separate entry: the Node/Web split happens at `#crypto`
// (package.json `imports`), which stays external so the consumer's resolver picks it.
export default defineConfig(
  packageBuild({
    entry: ['src/index.ts', 'src/crypto/crypto.node.ts', 'src/crypto/crypto.web.ts'],
    external: ['#crypto'],
    // Only the public entry has types; the providers are reached through `#crypto`.
    dts: { entry: 'src/index.ts', compilerOptions: { ignoreDeprecations: '6.0', composite: false } },
  }),
);
