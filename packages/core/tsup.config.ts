import { defineConfig } from 'tsup';
import { packageBuild } from '../../tsup.shared.ts';

// Every module is its own output file (tsup.shared.ts), the two crypto providers too: the
// Node/Web split happens at `#crypto` (package.json `imports`), which stays an import so
// the consumer's resolver picks the provider. Types: the two public entries only.
export default defineConfig(
  packageBuild({
    dts: { entry: ['src/index.ts', 'src/adapter.ts'], compilerOptions: { ignoreDeprecations: '6.0', composite: false } },
  }),
);
