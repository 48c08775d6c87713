/**
 * Owner limits' cost on the request path (docs/rate-limits.md, "Key and owner limits"):
 * `guard.check` of a cached key with memory stores, for a key without an owner, a key whose
 * owner has no limits, a key whose owner has one limit (decided with the key's in one
 * store decision), and a key whose owner has a quota (spent through the quota store, so
 * asynchronous). Cases alternate in one process, five rounds.
 *
 * With OLD_CORE=<dir holding packages/core/src of an earlier commit> (e.g. from
 * `git archive <commit> packages/core/src | tar -x -C <dir>`), that version's guard runs
 * the key without an owner, and the key whose owner has no limits, beside them: the
 * same-process A/B against the code before owners (or before owner quotas).
 *
 * Run: npx -y pnpm@10.34.9 bench owner-limits
 */
import * as core from '@keyset/core';
import { pathToFileURL } from 'node:url';
import { compare, save, setting, type Case, type Row } from './support.ts';

type CoreApi = Pick<typeof import('@keyset/core'), 'createKeyAdmin' | 'createKeyring' | 'createMemoryKeyStore' | 'createApiKeyGuard' | 'createRateLimiter' | 'createOwnerAdmin'>;
const oldCore: CoreApi | undefined = process.env.OLD_CORE
  ? ((await import(pathToFileURL(`${process.env.OLD_CORE}/packages/core/src/index.ts`).href)) as CoreApi)
  : undefined;

const N_KEYS = setting('BENCH_KEYS', 100, 10);
const ROUNDS = setting('BENCH_ROUNDS', 5, 1);
const POLICY = { limit: 100_000, windowSeconds: 1 };

/** A guard over `N_KEYS` keys (of `owner` when given), every key verified once (cached). */
async function setUp(
  api: CoreApi,
  owner?: { id: string; rateLimits?: { name: string; limit: number; windowSeconds: number }[]; quota?: { remaining: number } },
): Promise<() => unknown> {
  const store = api.createMemoryKeyStore();
  const keyring = api.createKeyring({ store, prefix: 'acme_live', lastUsed: false });
  if (owner !== undefined) await api.createOwnerAdmin(keyring as core.Keyring).create(owner as core.CreateOwnerInput);
  const admin = api.createKeyAdmin(keyring);
  const keys: string[] = [];
  for (let n = 0; n < N_KEYS; n++) keys.push((await admin.issue({ name: `svc-${n}`, scopes: ['orders:read'], ...(owner === undefined ? {} : { ownerId: owner.id }) })).key);
  const guard = api.createApiKeyGuard({ keyring, limiter: api.createRateLimiter({ defaultPolicy: POLICY }), refusedCredentials: false });
  const options = Object.freeze({ scopes: Object.freeze(['orders:read']) });
  const requests = keys.map((key) => ({ authorization: `ApiKey ${key}`, url: '/api/orders', remoteAddress: '127.0.0.1' }));
  for (const request of requests) await guard.check(request, options);
  let i = 0;
  return () => guard.check(requests[i++ % N_KEYS]!, options);
}

const plain = await setUp(core);
const ownerNoLimits = await setUp(core, { id: 'cus_free' });
const ownerLimited = await setUp(core, { id: 'cus_pro', rateLimits: [{ name: 'minute', limit: 1_000_000, windowSeconds: 1 }] });
const ownerQuota = await setUp(core, { id: 'cus_metered', quota: { remaining: 1e15 } });
const before = oldCore === undefined ? undefined : await setUp(oldCore);
const beforeOwner = oldCore === undefined ? undefined : await setUp(oldCore, { id: 'cus_free' });
const cases: Case[] = [
  ...(before === undefined ? [] : [{ name: 'before: no owner', fn: before }]),
  { name: 'no owner', fn: plain },
  ...(beforeOwner === undefined ? [] : [{ name: 'before: owner without limits', fn: beforeOwner }]),
  { name: 'owner without limits or quota', fn: ownerNoLimits },
  { name: 'owner with 1 limit', fn: ownerLimited },
  { name: 'owner with a quota', fn: ownerQuota },
];
const rounds: Row[][] = [];
for (let round = 1; round <= ROUNDS; round++) rounds.push(await compare(`guard.check, cached key, memory stores, round ${round}`, cases[0]!.name, cases));
save('owner-limits', { keys: N_KEYS, rounds });
