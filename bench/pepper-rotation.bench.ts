/**
 * Pepper rotation's cost on the verify path (docs/api-keys.md, "Rotating the pepper"): a
 * key under the newest pepper, verified by a keyring with one pepper and by one with two
 * (`peppers: [newest, older]`), warm (cache hit) and cold (cache off, memory store: the
 * store lookup and the extra HMAC per older pepper). Cases alternate in one process.
 *
 * With OLD_CORE=<dir holding packages/core/src of an earlier commit> (e.g. from
 * `git archive <commit> packages/core/src | tar -x -C <dir>`), that version's one-pepper
 * keyring runs beside them: the same-process A/B against the code before rotation.
 *
 * Run: npx -y pnpm@10.34.9 bench pepper-rotation
 */
import { createKeyAdmin, createKeyring, createMemoryKeyStore } from '@keyset/core';
import { pathToFileURL } from 'node:url';
import { compare, save, setting, type Case, type Row } from './support.ts';

const PREFIX = 'acme_live';
const N_KEYS = setting('BENCH_KEYS', 1000, 10);
const NEW = 'pepper-new-0123456789abcdef0123';
const OLD = 'pepper-old-0123456789abcdef0123';

type CoreApi = Pick<typeof import('@keyset/core'), 'createKeyAdmin' | 'createKeyring' | 'createMemoryKeyStore'>;
const oldCore: CoreApi | undefined = process.env.OLD_CORE
  ? ((await import(pathToFileURL(`${process.env.OLD_CORE}/packages/core/src/index.ts`).href)) as CoreApi)
  : undefined;

/** A keyring over `keys` issued under NEW, and its keys. */
async function setUp(core: CoreApi, options: { peppers?: string[]; pepper?: string; cache: boolean }): Promise<{ verify: (key: string) => unknown; keys: string[] }> {
  const store = core.createMemoryKeyStore();
  const issuer = core.createKeyAdmin(core.createKeyring({ store, prefix: PREFIX, pepper: NEW }));
  const keys: string[] = [];
  for (let n = 0; n < N_KEYS; n++) keys.push((await issuer.issue({ name: `svc-${n}`, scopes: ['orders:read'] })).key);
  const { peppers, pepper, cache } = options;
  const keyring = core.createKeyring({
    store,
    prefix: PREFIX,
    ...(peppers === undefined ? { pepper: pepper! } : { peppers }),
    lastUsed: false,
    ...(cache ? {} : { cache: false as const }),
  });
  for (const key of keys) await keyring.verify(key);
  return { verify: (key) => keyring.verify(key), keys };
}

let i = 0;
const groups: Record<string, Row[]> = {};
for (const cache of [true, false]) {
  const one = await setUp({ createKeyAdmin, createKeyring, createMemoryKeyStore }, { pepper: NEW, cache });
  const two = await setUp({ createKeyAdmin, createKeyring, createMemoryKeyStore }, { peppers: [NEW, OLD], cache });
  const before = oldCore === undefined ? undefined : await setUp(oldCore, { pepper: NEW, cache });
  const cases: Case[] = [
    ...(before === undefined ? [] : [{ name: 'before rotation existed: pepper', fn: () => before.verify(before.keys[i++ % N_KEYS]!) }]),
    { name: 'pepper: newest', fn: () => one.verify(one.keys[i++ % N_KEYS]!) },
    { name: 'peppers: [newest, older]', fn: () => two.verify(two.keys[i++ % N_KEYS]!) },
  ];
  const group = `verify a key under the newest pepper, ${cache ? 'warm (cache hit)' : 'cold (cache off, memory store)'}`;
  groups[group] = await compare(group, cases[0]!.name, cases);
}
save('pepper-rotation', { keys: N_KEYS, groups });
