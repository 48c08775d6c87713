/**
 * Drives one keyset Hono stack made from the built packages of one checkout, for an on-CPU
 * profile of one side of bench/inprocess-ab.bench.ts:
 *
 *   perf record -F 999 -g -o base.perf -- node --perf-basic-prof --import tsx bench/profile-ab-driver.ts full ../baseline
 *
 * Stacks: `auth`, `pagination`, `full`. The checkout defaults to this one. Prints CPU µs
 * per request. Env: PROFILE_REQUESTS (200000). Run with TSX_TSCONFIG_PATH=tsconfig.base.json
 * as the A/B is.
 */
import { resolve } from 'node:path';
import { keysetHono, load } from './http/ab-stacks.ts';
import { stackTimer, warmStack } from './http/fake-node.ts';

const which = process.argv[2] ?? 'full';
const dir = resolve(process.argv[3] ?? resolve(new URL('.', import.meta.url).pathname, '..'));
const N = Number(process.env.PROFILE_REQUESTS ?? 200_000);
const parts = { auth: which !== 'pagination', paginate: which !== 'auth' };
const { app, keys } = await keysetHono(await load(dir, 'dist/index.js'), parts);
const stack = await warmStack(which, app, keys, 250);
const time = stackTimer(N);
console.log(`${which} ${dir}: ${(await time(stack)).toFixed(2)} CPU µs/request over ${N} requests`);
