/**
 * Fast paths, kept or dropped (issue 22, item 1): each hand-written fast path against the
 * plain form that replaced it (or would replace it), old and new module loaded in ONE
 * process and timed in interleaved rounds, so both see the same JIT, heap and machine
 * load. The old modules are taken from git at BENCH_BASE (default: the commit before the
 * plain forms landed) into .bench-tmp/, the new ones are the working tree's.
 *
 * Each case reports ns per call for old and new (medians over rounds) and the median of
 * the per-round differences (CPU time, `process.cpuUsage()`), and multiplies that by how often a request of the in-process
 * full stack (bench/http/keyset-stacks.ts: API key + GCRA + one cursor page) makes the
 * call. A fast path stays only if it saves at least 0.3 µs per request.
 *
 * Env: BENCH_BASE (git commit), BENCH_ROUNDS (101), BENCH_BATCH (20,000 calls per case per round),
 * BENCH_ONLY / BENCH_SKIP (regular expressions over case names).
 */
import { execFileSync } from 'node:child_process';
import * as nodeCryptoModule from 'node:crypto';
import { createHmac } from 'node:crypto';
import { Buffer } from 'node:buffer';
import { existsSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { save } from './support.ts';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const BASE = process.env.BENCH_BASE ?? 'd6f2a0a';
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 101);
const BATCH = Number(process.env.BENCH_BATCH ?? 20_000);

/** The base commit's core sources, extracted once. */
function baseCore(): string {
  const sha = execFileSync('git', ['rev-parse', '--short', BASE], { cwd: root, encoding: 'utf8' }).trim();
  const dir = join(root, '.bench-tmp', `fast-paths-${sha}`);
  if (!existsSync(join(dir, 'packages', 'core', 'src'))) {
    mkdirSync(dir, { recursive: true });
    execFileSync('sh', ['-c', `git archive ${sha} packages/core/src | tar -x -C '${dir}'`], { cwd: root });
  }
  return join(dir, 'packages', 'core', 'src');
}

const oldSrc = baseCore();
const newSrc = join(root, 'packages', 'core', 'src');
const load = <T>(src: string, path: string): Promise<T> => import(pathToFileURL(join(src, path)).href) as Promise<T>;

type Provider = typeof import('../packages/core/src/crypto/crypto.node.ts').nodeCrypto;
type ParseModule = typeof import('../packages/core/src/pagination/parse-page-query.ts');
type GcraModule = typeof import('../packages/core/src/rate-limit/gcra.ts');
type HeadersModule = typeof import('../packages/core/src/rate-limit/rate-limit-headers.ts');

const [oldCrypto, newCrypto, oldParse, newParse, oldGcra, newGcra, oldHeaders, newHeaders] = await Promise.all([
  load<{ nodeCrypto: Provider }>(oldSrc, 'crypto/crypto.node.ts'),
  load<{ nodeCrypto: Provider }>(newSrc, 'crypto/crypto.node.ts'),
  load<ParseModule>(oldSrc, 'pagination/parse-page-query.ts'),
  load<ParseModule>(newSrc, 'pagination/parse-page-query.ts'),
  load<GcraModule>(oldSrc, 'rate-limit/gcra.ts'),
  load<GcraModule>(newSrc, 'rate-limit/gcra.ts'),
  load<HeadersModule>(oldSrc, 'rate-limit/rate-limit-headers.ts'),
  load<HeadersModule>(newSrc, 'rate-limit/rate-limit-headers.ts'),
]);

let sink = 0;
const keep = (value: unknown): void => {
  sink += typeof value === 'string' ? value.length : typeof value === 'object' && value !== null ? 1 : 0;
};

interface Case {
  name: string;
  /** Calls per request of the in-process full stack. */
  perRequest: number;
  perRequestNote: string;
  old: (i: number) => unknown;
  new: (i: number) => unknown;
}

// Inputs as the full stack sees them: a secret of the bench's length, a cursor's MAC input
// (version, fingerprint, payload as text), its bytes (~70), a 94-character cursor.
const secret = new TextEncoder().encode('benchmark-cursor-secret-0123456789abcdef');
const frame = new Uint8Array(256).map((_, i) => (i * 37) & 0xff);
const signed = Array.from({ length: 16 }, (_, i) => frame.subarray(i, i + 66 + (i % 5)));
const macText = Array.from({ length: 16 }, (_, i) => `keyset-cursor\u00002\u0000fp${i}\u0000{"d":"f","p":["2025-01-0${i % 9}T10:00:00.000000Z",${1000 + i}],"t":1700000000}`);
const cursorText = Buffer.from(frame.subarray(0, 70)).toString('base64url');
const queries = Array.from({ length: 16 }, (_, i) =>
  i % 2 === 0 ? new URLSearchParams(`limit=20${i % 4 === 0 ? '&status=paid' : ''}`) : new URLSearchParams(`limit=20&cursor=${cursorText.slice(0, 80 + i)}&status=paid`),
);
const modes = newParse.resolveModes({});
const policy = Object.freeze({ limit: 1_000_000, windowSeconds: 10 });
const decisions = Array.from({ length: 16 }, (_, i) => ({ allowed: true, policy, remaining: 999_000 - i, resetSeconds: 1, retryAfterSeconds: 0 }));

/** The plain form of an HMAC: `createHmac` per call. */
const createHmacBytes = (key: Uint8Array, data: Uint8Array): string => createHmac('sha256', key).update(data).digest('binary');

const cases: Case[] = [
  {
    name: 'parse limit/offset/cursor: one forEach pass (old) vs three getAll (new)',
    perRequest: 1,
    perRequestNote: 'one parse per page request',
    old: (i) => oldParse.parseWithModes(queries[i & 15] as URLSearchParams, modes),
    new: (i) => newParse.parseWithModes(queries[i & 15] as URLSearchParams, modes),
  },
  {
    name: 'HMAC of bytes: old provider (last-key memo, digest copied by hand) vs new (pads and views on the provider)',
    perRequest: 0,
    perRequestNote: 'not on the full stack: the codec MACs its input as text',
    old: (i) => oldCrypto.nodeCrypto.hmacSha256BinaryBytes!(secret, signed[i & 15] as Uint8Array),
    new: (i) => newCrypto.nodeCrypto.hmacSha256BinaryBytes!(secret, signed[i & 15] as Uint8Array),
  },
  {
    name: 'HMAC of text: old provider (utf8Write too) vs new',
    perRequest: 3,
    perRequestNote: 'verify the incoming cursor, sign next and prev',
    old: (i) => oldCrypto.nodeCrypto.hmacSha256Binary!(secret, macText[i & 15] as string),
    new: (i) => newCrypto.nodeCrypto.hmacSha256Binary!(secret, macText[i & 15] as string),
  },
  {
    name: 'HMAC of text: new provider (kept pads, two one-shot hashes) vs createHmac (plain)',
    perRequest: 3,
    perRequestNote: 'verify the incoming cursor, sign next and prev',
    old: (i) => newCrypto.nodeCrypto.hmacSha256Binary!(secret, macText[i & 15] as string),
    new: (i) => createHmac('sha256', secret).update(macText[i & 15] as string, 'utf8').digest('binary'),
  },
  {
    name: 'HMAC of bytes: new provider (kept pads, two one-shot hashes) vs createHmac (plain)',
    perRequest: 0,
    perRequestNote: 'not on the full stack: the codec MACs its input as text',
    old: (i) => newCrypto.nodeCrypto.hmacSha256BinaryBytes!(secret, signed[i & 15] as Uint8Array),
    new: (i) => createHmacBytes(secret, signed[i & 15] as Uint8Array),
  },
  {
    name: 'base64url of a cursor\'s bytes (a fresh array): old (Buffer per ArrayBuffer, last-view memo, base64urlSlice) vs new (Buffer.from(range).toString)',
    perRequest: 2,
    perRequestNote: 'next and prev cursor',
    // The codec hands over a fresh array per cursor (its bytes copied here on both sides alike).
    old: (i) => oldCrypto.nodeCrypto.base64url!.encode((signed[i & 15] as Uint8Array).slice()),
    new: (i) => newCrypto.nodeCrypto.base64url!.encode((signed[i & 15] as Uint8Array).slice()),
  },
  {
    name: 'GCRA parameters of the default policy: memo (old) vs validated and computed per call (new)',
    perRequest: 1,
    perRequestNote: 'one decision per request',
    old: () => oldGcra.gcraParameters(policy),
    new: () => newGcra.gcraParameters(policy),
  },
  {
    name: 'draft-11 headers of one decision: memoised policy text (old) vs built per call (new)',
    perRequest: 1,
    perRequestNote: 'one header record per request',
    old: (i) => oldHeaders.rateLimitHeaders(decisions[i & 15] as (typeof decisions)[number]),
    new: (i) => newHeaders.rateLimitHeaders(decisions[i & 15] as (typeof decisions)[number]),
  },
];

// Inside the kept HMAC (pads, two one-shot hashes): each trick the old provider added,
// against the plain step the new one takes, written out here over the same pads.
const oneShot = (nodeCryptoModule as { hash: (algorithm: string, data: Uint8Array, encoding: 'buffer' | 'latin1') => Buffer | string }).hash;
const pads = { inner: Buffer.alloc(256), outer: Buffer.alloc(96), views: [] as Uint8Array[] };
const block = Buffer.alloc(64);
block.set(secret);
for (let i = 0; i < 64; i++) {
  pads.inner[i] = (block[i] as number) ^ 0x36;
  pads.outer[i] = (block[i] as number) ^ 0x5c;
}
/** The inner hash of `message` after the pads, as the new provider takes it. */
const innerInput = (message: Uint8Array): Uint8Array => {
  pads.inner.set(message, 64);
  return pads.inner.subarray(0, 64 + message.length);
};
const outerOf = (): string => oneShot('sha256', pads.outer, 'latin1') as string;
const copyByHand = (digest: string): void => {
  for (let i = 0; i < 32; i++) pads.outer[64 + i] = digest.charCodeAt(i);
};
cases.push(
  {
    name: 'inside the HMAC: inner digest as a binary string (old and new) vs as a Buffer',
    perRequest: 3,
    perRequestNote: 'one inner digest per MAC',
    old: (i) => (pads.outer.write(oneShot('sha256', innerInput(signed[i & 15] as Uint8Array), 'latin1') as string, 64, 'latin1'), outerOf()),
    new: (i) => (pads.outer.set(oneShot('sha256', innerInput(signed[i & 15] as Uint8Array), 'buffer') as Buffer, 64), outerOf()),
  },
  {
    name: 'inside the HMAC: digest copied by charCodeAt (old) vs Buffer#write latin1 (new)',
    perRequest: 3,
    perRequestNote: 'one copy per MAC',
    old: (i) => (copyByHand(oneShot('sha256', innerInput(signed[i & 15] as Uint8Array), 'latin1') as string), outerOf()),
    new: (i) => (pads.outer.write(oneShot('sha256', innerInput(signed[i & 15] as Uint8Array), 'latin1') as string, 64, 'latin1'), outerOf()),
  },
  {
    name: 'inside the HMAC: views of the scratch buffer kept by length (old and new) vs subarray per call (plain)',
    perRequest: 3,
    perRequestNote: 'one view per MAC',
    old: (i) => {
      const message = signed[i & 15] as Uint8Array;
      pads.inner.set(message, 64);
      const length = 64 + message.length;
      const view = pads.views[length] ?? (pads.views[length] = new Uint8Array(pads.inner.buffer, pads.inner.byteOffset, length));
      pads.outer.write(oneShot('sha256', view, 'latin1') as string, 64, 'latin1');
      return outerOf();
    },
    new: (i) => (pads.outer.write(oneShot('sha256', innerInput(signed[i & 15] as Uint8Array), 'latin1') as string, 64, 'latin1'), outerOf()),
  },
);

// BENCH_ONLY (a regular expression over case names) runs some cases alone: the base64url
// case with the old module fills a WeakMap per fresh array, whose collection then weighs on
// the other cases of the same process.
const only = process.env.BENCH_ONLY === undefined ? undefined : new RegExp(process.env.BENCH_ONLY);
const skip = process.env.BENCH_SKIP === undefined ? undefined : new RegExp(process.env.BENCH_SKIP);
for (let k = cases.length - 1; k >= 0; k--) {
  const name = (cases[k] as Case).name;
  if ((only !== undefined && !only.test(name)) || (skip !== undefined && skip.test(name))) cases.splice(k, 1);
}

// Same answers first: a fast path that is wrong is not measured.
for (const c of cases) {
  for (let i = 0; i < 16; i++) {
    const a = JSON.stringify(c.old(i));
    const b = JSON.stringify(c.new(i));
    if (a !== b) throw new Error(`${c.name}: old and new differ at input ${i}: ${a} vs ${b}`);
  }
}

/** CPU ns per call over one batch (user + system: other processes on a shared machine do not count). */
function time(fn: (i: number) => unknown): number {
  const start = process.cpuUsage();
  for (let i = 0; i < BATCH; i++) keep(fn(i));
  const spent = process.cpuUsage(start);
  return ((spent.user + spent.system) * 1000) / BATCH;
}

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
};
const quantile = (values: number[], q: number): number => [...values].sort((a, b) => a - b)[Math.floor(q * (values.length - 1))] as number;

// Warm-up: every function hot before the first timed round.
for (const c of cases) for (let r = 0; r < 3; r++) (time(c.old), time(c.new));

const samples = cases.map(() => ({ old: [] as number[], new: [] as number[], saved: [] as number[] }));
for (let round = 0; round < ROUNDS; round++) {
  cases.forEach((c, k) => {
    const s = samples[k] as (typeof samples)[number];
    // Old first on even rounds, new first on odd ones.
    let oldNs: number;
    let newNs: number;
    if (round % 2 === 0) {
      oldNs = time(c.old);
      newNs = time(c.new);
    } else {
      newNs = time(c.new);
      oldNs = time(c.old);
    }
    s.old.push(oldNs);
    s.new.push(newNs);
    s.saved.push(newNs - oldNs);
  });
}

const rows = cases.map((c, k) => {
  const s = samples[k] as (typeof samples)[number];
  const saved = median(s.saved);
  return {
    case: c.name,
    'old ns/call': Math.round(median(s.old)),
    'new ns/call': Math.round(median(s.new)),
    'old saves ns/call (median, IQR)': `${Math.round(saved)} (${Math.round(quantile(s.saved, 0.25))}..${Math.round(quantile(s.saved, 0.75))})`,
    'calls/request': c.perRequest,
    'old saves µs/request': Number(((saved * c.perRequest) / 1000).toFixed(3)),
    note: c.perRequestNote,
  };
});
console.log(`\nFast paths, old (${BASE}) vs new, ${ROUNDS} interleaved rounds × ${BATCH} calls (sink ${sink > 0 ? 'ok' : 'empty'})`);
console.table(rows.map(({ note: _, ...row }) => row));
save('fast-paths', { base: BASE, rounds: ROUNDS, batch: BATCH, rows });
