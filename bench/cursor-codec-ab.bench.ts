/**
 * The cursor codec and the timestamp check, old against new in ONE process (issue 22,
 * item 1): the modules of BENCH_BASE (default d6f2a0a, the last commit with the
 * hand-written codec) are taken from git into .bench-tmp/, the new ones are the working
 * tree's, and each operation is timed in interleaved rounds (CPU time of the process,
 * `process.cpuUsage()`, so time spent descheduled on a shared machine is not counted).
 *
 * Rows: encode (a next-page cursor of GET /api/orders: a microsecond timestamp and an
 * int), decode (such a cursor as a query string hands it over), isTimestamp (PostgreSQL
 * and ISO spellings), and a middle page's codec work: one decode, two encodes (next,
 * prev), three timestamp checks. Variants beside old and new: the new codec over the
 * old provider (the codec alone), and the new codec without each provider capability it
 * uses (the portable base64url; the MAC as bytes through hmacSha256), which is what each
 * buys. A fast path stays only if it saves at least 0.3 µs per request.
 *
 * Run: node --import tsx bench/cursor-codec-ab.bench.ts
 * Env: BENCH_BASE (git commit), BENCH_ROUNDS (41), BENCH_BATCH (10,000 calls per row per round).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const BASE = process.env.BENCH_BASE ?? 'd6f2a0a';
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 41);
const BATCH = Number(process.env.BENCH_BATCH ?? 10_000);

/** The base commit's core sources, extracted once, with `#crypto` mapped to its node provider. */
function baseCore(): string {
  const sha = execFileSync('git', ['rev-parse', '--short', BASE], { cwd: root, encoding: 'utf8' }).trim();
  const dir = join(root, '.bench-tmp', `cursor-codec-${sha}`);
  if (!existsSync(join(dir, 'packages', 'core', 'src'))) {
    mkdirSync(dir, { recursive: true });
    execFileSync('sh', ['-c', `git archive ${sha} packages/core/src | tar -x -C '${dir}'`], { cwd: root });
    const pkg = { type: 'module', imports: { '#crypto': './src/crypto/crypto.node.ts' } };
    writeFileSync(join(dir, 'packages', 'core', 'package.json'), JSON.stringify(pkg));
  }
  return join(dir, 'packages', 'core', 'src');
}

const oldSrc = baseCore();
const newSrc = join(root, 'packages', 'core', 'src');
const load = <T>(src: string, path: string): Promise<T> => import(pathToFileURL(join(src, path)).href) as Promise<T>;

type CodecModule = typeof import('../packages/core/src/pagination/cursor-codec.ts');
type TimestampModule = typeof import('../packages/core/src/internal/timestamp.ts');
type Provider = import('../packages/core/src/crypto/crypto-provider.ts').CryptoProvider;
type SortModule = typeof import('../packages/core/src/pagination/sort-spec.ts');
type DecodedCursor = import('../packages/core/src/pagination/cursor-codec.ts').DecodedCursor;

const [oldCodec, newCodec, oldTime, newTime, oldCrypto, newCrypto, sorts] = await Promise.all([
  load<CodecModule>(oldSrc, 'pagination/cursor-codec.ts'),
  load<CodecModule>(newSrc, 'pagination/cursor-codec.ts'),
  load<TimestampModule>(oldSrc, 'internal/timestamp.ts'),
  load<TimestampModule>(newSrc, 'internal/timestamp.ts'),
  load<{ nodeCrypto: Provider }>(oldSrc, 'crypto/crypto.node.ts'),
  load<{ nodeCrypto: Provider }>(newSrc, 'crypto/crypto.node.ts'),
  load<SortModule>(newSrc, 'pagination/sort-spec.ts'),
]);

const secrets = ['benchmark-cursor-secret-0123456789abcdef'];
// A fixed clock: every variant writes the same issue time, so their cursors can be compared.
const clock = (): number => 1_790_000_000_000;
const sort = sorts.defineSortSpec([
  { key: 'createdAt', dir: 'desc', type: 'timestamp' },
  { key: 'id', dir: 'desc', type: 'int', unique: true },
]);
const fp = 'bL8vBwJSqx7t4ObkUmD4RM78gH2sL60WszaJkqAha58';
const positions = Array.from({ length: 64 }, (_, i) => [`2024-05-01 10:${String(i % 60).padStart(2, '0')}:00.${123456 + i}+00`, 10_000 - i] as [string, number]);
const stamps = positions.flatMap((p, i) => [p[0], `2026-01-01T00:00:${String(i % 60).padStart(2, '0')}.123456Z`]);
const { base64url: _b, ...withoutBase64 } = newCrypto.nodeCrypto;
const { hmacSha256Binary: _h, ...withoutBinaryMac } = newCrypto.nodeCrypto;

interface Variant {
  codec: ReturnType<CodecModule['createPaginatorCursorCodec']>;
  isTimestamp: (text: string) => boolean;
}
const variants: Record<string, Variant> = {
  old: { codec: oldCodec.createPaginatorCursorCodec({ secrets, clock, crypto: oldCrypto.nodeCrypto }), isTimestamp: oldTime.isTimestamp },
  new: { codec: newCodec.createPaginatorCursorCodec({ secrets, clock, crypto: newCrypto.nodeCrypto }), isTimestamp: newTime.isTimestamp },
  'new codec, old provider': { codec: newCodec.createPaginatorCursorCodec({ secrets, clock, crypto: oldCrypto.nodeCrypto }), isTimestamp: newTime.isTimestamp },
  'new, portable base64url': { codec: newCodec.createPaginatorCursorCodec({ secrets, clock, crypto: withoutBase64 }), isTimestamp: newTime.isTimestamp },
  'new, MAC as bytes': { codec: newCodec.createPaginatorCursorCodec({ secrets, clock, crypto: withoutBinaryMac }), isTimestamp: newTime.isTimestamp },
};
const names = Object.keys(variants);

// Cursors as a request hands them over: read from a parsed query string. Every variant
// must decode them, and encode the same text.
// Both codecs are awaited: the old one answered synchronously where it could, the new
// one is async throughout (awaiting a value costs the microtask the comparison measures).
const cursors = await Promise.all(positions.map(async (p) => new URLSearchParams(`limit=20&cursor=${await variants.old!.codec.encodeChecked(p, fp, sort, 'forward')}`).get('cursor')!));
for (const [name, v] of Object.entries(variants)) {
  for (const [i, c] of cursors.entries()) {
    const decoded: DecodedCursor = await v.codec.decode(c, fp, sort);
    if (JSON.stringify(decoded.position) !== JSON.stringify(positions[i])) throw new Error(`${name} decodes differently`);
    if ((await v.codec.encodeChecked(positions[i]!, fp, sort, 'forward')) !== cursors[i]) throw new Error(`${name} encodes differently`);
  }
}

let sink = 0;
const rows: Record<string, (v: Variant, i: number) => Promise<void> | void> = {
  encode: async (v, i) => {
    sink += (await v.codec.encodeChecked(positions[i & 63]!, fp, sort, 'forward')).length;
  },
  decode: async (v, i) => {
    sink += (await v.codec.decode(cursors[i & 63]!, fp, sort)).position!.length;
  },
  isTimestamp: (v, i) => {
    sink += v.isTimestamp(stamps[i & 127]!) ? 1 : 0;
  },
  'page (1 decode, 2 encodes, 3 checks)': async (v, i) => {
    sink += (await v.codec.decode(cursors[i & 63]!, fp, sort)).position!.length;
    sink += (await v.codec.encodeChecked(positions[(i + 1) & 63]!, fp, sort, 'forward')).length;
    sink += (await v.codec.encodeChecked(positions[(i + 2) & 63]!, fp, sort, 'backward')).length;
    for (let k = 0; k < 3; k++) sink += v.isTimestamp(stamps[(i + k) & 127]!) ? 1 : 0;
  },
};

const sorted = (xs: number[]): number[] => [...xs].sort((a, b) => a - b);
const at = (xs: number[], q: number): number => sorted(xs)[Math.floor((xs.length - 1) * q)]!;
const fmt = (n: number): string => n.toFixed(0).padStart(6);

console.log(`cursor codec A/B: base ${BASE} vs working tree, node ${process.version}, ${ROUNDS} interleaved rounds x ${BATCH} calls, CPU ns per call (median of rounds)`);
console.log(`and each variant minus new (median of the per-round differences [IQR]); negative = faster than new\n`);
for (const [row, run] of Object.entries(rows)) {
  const times: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
  for (let r = 0; r < ROUNDS + 3; r++) {
    for (const name of r % 2 === 0 ? names : [...names].reverse()) {
      const v = variants[name]!;
      const t0 = process.cpuUsage();
      for (let i = 0; i < BATCH; i++) await run(v, i);
      const used = process.cpuUsage(t0);
      // The first three rounds warm up.
      if (r >= 3) times[name]!.push(((used.user + used.system) * 1000) / BATCH);
    }
  }
  console.log(row);
  for (const name of names) {
    const diff = times[name]!.map((t, k) => t - times.new![k]!);
    const vsNew = name === 'new' ? '' : `   ${fmt(at(diff, 0.5))} [${at(diff, 0.25).toFixed(0)}, ${at(diff, 0.75).toFixed(0)}]`;
    console.log(`  ${name.padEnd(26)} ${fmt(at(times[name]!, 0.5))}${vsNew}`);
  }
}
if (sink === 0) console.log('');
