#!/usr/bin/env node
// Rewrites the result sections of docs/benchmarks.md (and bench capacity's in
// docs/scaling.md) from bench/results/*.json, so the pages always show the last run's numbers. Sections sit between
// `<!-- bench:NAME -->` and `<!-- /bench:NAME -->`; `pnpm bench` runs this at the end.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const doc = join(root, 'docs', 'benchmarks.md');
const load = (name) => {
  const file = join(root, 'bench', 'results', `${name}.json`);
  return existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : undefined;
};
const fmt = (n, digits = 0) => Number(n).toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
/** Date, Node version, load average and the command that reruns the section's benchmark. */
const stamp = (r, name) => {
  const load = r.loadAverage ? `, load average ${r.loadAverage.map((l) => fmt(l, 1)).join(' → ')} (2 cores)` : '';
  return `<sub>${r.date.slice(0, 16).replace('T', ' ')} UTC, Node ${r.node}${load}. Rerun: \`npx -y pnpm@10.34.9 bench ${name}\`</sub>`;
};

function table(head, rows) {
  return [`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`, ...rows.map((r) => `| ${r.join(' | ')} |`)].join('\n');
}

function microTable(rows, baselineLabel) {
  return table(['case', 'ns/op', 'ops/s', `× ${baselineLabel}`], rows.map((r) => [r.name, fmt(r.nsPerOp), fmt(r.opsPerSec), fmt(r.vsBaseline, 2)]));
}

// --- bench capacity's figures, also rendered into docs/scaling.md -------------------------

const EVERY_FEATURE_PARTS = 'every feature, per-part stores';
const EVERY_FEATURE_ONE = 'every feature, one request store';
/** Requests per second per instance, and the share of a Redis thread planned, in the fleet arithmetic. */
const PER_INSTANCE = 10_000;
const UTILISATION = 0.5;

function latencyTable(h) {
  const rows = h.latency.map((t) => [
    t.label,
    fmt(t.p50Micros),
    fmt(t.p99Micros),
    t.stores === 'memory' ? '–' : `**${fmt(t.addedP50Micros)}**`,
    t.stores === 'memory' ? '–' : `**${fmt(t.addedP99Micros)}**`,
    fmt(t.redisCallsPerRequest, 2),
    fmt(t.redisUsecPerRequest, 1),
    fmt(t.redisCpuMicrosPerRequest, 1),
  ]);
  return table(['stores', 'p50 µs', 'p99 µs', 'Redis adds at p50, µs', 'Redis adds at p99, µs', 'Redis calls per request', 'Redis command µs per request (commandstats)', 'redis-server CPU µs per request (INFO cpu)'], rows);
}

function hammerTable(h) {
  const rows = h.hammer.map((t) => [
    t.label,
    fmt(t.refusedPerSecond),
    `${fmt(t.refused)}${t.other === 0 ? '' : ` (${fmt(t.other)} not refused)`}`,
    fmt(t.redisCalls),
    `**${fmt(t.redisCallsPerRefusal, 2)}**`,
    fmt(t.redisCpuMicrosPerRefusal, 1),
    fmt(t.serverCpuMicrosPerRefusal, 1),
  ]);
  return table(['stores', 'refused per second', 'requests refused', 'Redis calls', 'Redis calls per refusal', 'redis-server CPU µs per refusal (INFO cpu)', 'instance CPU µs per refusal'], rows);
}

function httpSettings(h) {
  const s = h.settings;
  return `The example-like Hono stack (bench/capacity-server.ts: a key with an owner, rate limits, quotas and in-flight caps on both, ${fmt(s.keys)} keys), one server process per row, one redis-server each. Latency: ${s.rounds} rounds × ${fmt(s.batch)} requests per server, one at a time over one keep-alive connection, the servers taking turns, after ${fmt(s.warmup)} warm-up requests each. Hammer: one key over its rate limit, ${s.hammerConnections} connections (autocannon) for ${s.hammerSeconds} s per server.`;
}

/** The two whole-request rows of the store-level run, and the same requests through the guard over HTTP. */
function beforeAfter(d) {
  const parts = d.rows.find((t) => t.operation.startsWith(EVERY_FEATURE_PARTS));
  const one = d.rows.find((t) => t.operation.startsWith(EVERY_FEATURE_ONE));
  const httpParts = d.http?.latency.find((t) => t.stores === 'redis-parts');
  const httpOne = d.http?.latency.find((t) => t.stores === 'redis-request');
  return parts && one ? { parts, one, httpParts, httpOne } : undefined;
}


const scalingSections = {
  'scaling-stores'() {
    return sections.capacity();
  },
  'scaling-request'() {
    const r = load('capacity');
    const b = r && beforeAfter(r.data);
    if (!b) return undefined;
    const { parts, one, httpParts, httpOne } = b;
    const rows = [
      ['Redis calls (`EVALSHA`) per admitted request', fmt(parts.roundTrips, 0), fmt(one.roundTrips, 0), httpParts ? `${fmt(httpParts.redisCallsPerRequest, 2)} → ${fmt(httpOne.redisCallsPerRequest, 2)}` : '–'],
      ['commands the scripts run inside Redis', fmt(parts.commandsInside, 1), fmt(one.commandsInside, 1), '–'],
      ['Redis command time per request, µs (commandstats `usec`)', fmt(parts.commandMicros, 1), fmt(one.commandMicros, 1), httpParts ? `${fmt(httpParts.redisUsecPerRequest, 1)} → ${fmt(httpOne.redisUsecPerRequest, 1)}` : '–'],
      ['of which the commands the scripts run, µs (the rest: the scripts\' own Lua and the call)', parts.insideMicros === undefined ? '–' : fmt(parts.insideMicros, 1), one.insideMicros === undefined ? '–' : fmt(one.insideMicros, 1), '–'],
      ['redis-server CPU per request, µs (`INFO cpu`: commands, parsing, replies)', fmt(parts.serverCpuMicros, 1), fmt(one.serverCpuMicros, 1), httpParts ? `${fmt(httpParts.redisCpuMicrosPerRequest, 1)} → ${fmt(httpOne.redisCpuMicrosPerRequest, 1)}` : '–'],
      ['bytes to / from Redis per request', `${fmt(parts.bytesToServer)} / ${fmt(parts.bytesFromServer)}`, `${fmt(one.bytesToServer)} / ${fmt(one.bytesFromServer)}`, '–'],
      ['requests per second one Redis thread (one Cluster shard) sustains', fmt(parts.ceilingPerCore), fmt(one.ceilingPerCore), '–'],
    ];
    const ratios = [
      ['commandstats `usec`', one.commandMicros / parts.commandMicros],
      ['`INFO cpu`', one.serverCpuMicros / parts.serverCpuMicros],
      ...(httpParts
        ? [
            ['commandstats `usec` over HTTP', httpOne.redisUsecPerRequest / httpParts.redisUsecPerRequest],
            ['`INFO cpu` over HTTP', httpOne.redisCpuMicrosPerRequest / httpParts.redisCpuMicrosPerRequest],
          ]
        : []),
    ];
    const met = ratios.filter(([, ratio]) => ratio <= 1 / 3).length;
    const verdict = met === ratios.length ? 'met on every measure' : met === 0 ? 'not met on any measure' : `met on ${met} of ${ratios.length} measures`;
    return `${table(['every feature on, a key with an owner', 'before: per-part stores', 'after: one request store', 'the same through the guard over HTTP, one request at a time (before → after)'], rows)}\n\nRedis CPU per admitted request, after ÷ before, same run: ${ratios.map(([name, ratio]) => `${fmt(ratio, 2)} (${name})`).join(', ')}. Target, at most a third (0.33): **${verdict}**. ${stamp(r, 'capacity')}`;
  },
  'scaling-fleet'() {
    const r = load('capacity');
    const b = r && beforeAfter(r.data);
    if (!b) return undefined;
    const { parts, one } = b;
    const rows = [10, 100, 1000].map((instances) => {
      const rps = instances * PER_INSTANCE;
      const threads = (t) => (rps * t.serverCpuMicros) / 1e6;
      const shards = (t) => Math.ceil(threads(t) / UTILISATION);
      return [fmt(instances), fmt(rps), `${fmt(threads(parts), 1)} → ${fmt(threads(one), 1)}`, `${fmt(shards(parts))} → **${fmt(shards(one))}**`, `${fmt((rps * (parts.bytesToServer + parts.bytesFromServer)) / 1e6)} → ${fmt((rps * (one.bytesToServer + one.bytesFromServer)) / 1e6)}`];
    });
    return `${table(['instances', 'requests/s', 'Redis threads busy (before → after)', `Redis shards at ${fmt(UTILISATION * 100)} % (before → after)`, 'Redis traffic, MB/s (before → after)'], rows)}\n\n${fmt(PER_INSTANCE)} requests per second per instance, every feature on, each request admitted; redis-server CPU per request ${fmt(parts.serverCpuMicros, 1)} µs before (per-part stores) and ${fmt(one.serverCpuMicros, 1)} µs after (the request store), from the two whole-request rows of the store table above. ${stamp(r, 'capacity')}`;
  },
  'scaling-latency'() {
    const r = load('capacity');
    if (!r?.data.http) return undefined;
    return `${latencyTable(r.data.http)}\n\n${httpSettings(r.data.http)} ${stamp(r, 'capacity')}`;
  },
  'scaling-hammer'() {
    const r = load('capacity');
    if (!r?.data.http) return undefined;
    return `${hammerTable(r.data.http)}\n\n${httpSettings(r.data.http)} ${stamp(r, 'capacity')}`;
  },
};

const sections = {
  http() {
    const r = load('http');
    if (!r) return undefined;
    const rows = r.data.table.map((t) => [
      t.stack,
      fmt(t['median req/s']),
      fmt(t['x bare req/s'], 2),
      fmt(t['CPU µs/req'], 1),
      fmt(t['CPU µs over bare'], 1),
      fmt(t['x bare CPU'], 2),
      t['x bare CPU per round'],
      t['header + body bytes'] ?? '',
    ]);
    return `${table(['stack', 'median req/s', '× bare req/s', 'server CPU µs/req', 'CPU µs over bare', '× bare CPU', '× bare CPU, per round', 'header + body bytes'], rows)}\n\n${r.data.rounds} rounds × ${r.data.seconds} s, ${r.data.connections} connections, ${fmt(r.data.keys)} keys and ${fmt(r.data.paths)} distinct page URLs in rotation. ${stamp(r, 'http')}`;
  },
  inprocess() {
    const r = load('inprocess');
    if (!r) return undefined;
    const units = (t, key) => (t[key] === undefined ? '–' : fmt(t[key], 3));
    const stacks = table(
      ['stack', 'CPU µs/request', 'CPU µs over bare Hono (median of rounds)', 'interquartile', 'over bare ÷ bare Hono'],
      r.data.rows.map((t) => [t.stack, fmt(t['µs/req'], 1), fmt(t['µs over bare'], 1), t['over bare, interquartile'], units(t, 'over bare ÷ bare')]),
    );
    const micro = table(
      ['operation', 'µs/op (median of rounds)', 'interquartile', '÷ bare Hono'],
      r.data.micro.map((t) => [t.case, fmt(t['µs/op'], 2), t.interquartile, units(t, '÷ bare')]),
    );
    return `${stacks}\n\nParts of a request on their own, through the public API, each awaited:\n\n${micro}\n\n${r.data.rounds} rounds × ${fmt(r.data.batch)} requests per stack, ${fmt(r.data.keys)} keys in rotation. ${stamp(r, 'inprocess')}`;
  },
  'inprocess-adapters'() {
    const r = load('inprocess-adapters');
    if (!r) return undefined;
    const rows = table(
      ['stack', 'CPU µs/request', 'CPU µs over its bare framework (median of rounds)', 'interquartile', '× bare (median of rounds)'],
      r.data.rows.map((t) => [t.stack, fmt(t['µs/req'], 1), fmt(t['µs over bare'], 1), t['over bare, interquartile'], fmt(t['× bare'], 2)]),
    );
    return `${rows}\n\n${r.data.rounds} rounds × ${fmt(r.data.batch)} requests per stack, one process per stack, ${fmt(r.data.keys)} keys in rotation. ${stamp(r, 'inprocess-adapters')}`;
  },
  'bundle-size'() {
    const r = load('bundle-size');
    if (!r) return undefined;
    const kb = (n) => fmt(n / 1000, 1);
    const sizes = table(['bundle', 'KB minified', 'KB gzip'], r.data.rows.map((t) => [t.bundle, kb(t.bytes), kb(t.gzipBytes)]));
    const largest = table(['module (minimal handler)', 'bytes minified'], r.data.minimalLargest.map((t) => [`\`${t.file}\``, fmt(t.bytes)]));
    return `${sizes}\n\nesbuild \`--bundle --minify --platform=neutral\` over the built packages; 1 KB = 1,000 bytes; the ceiling test/bundle-size.test.ts holds the minimal handler to: ${kb(r.data.limit)} KB. Largest modules in the minimal handler:\n\n${largest}\n\n${stamp(r, 'bundle-size')}`;
  },
  cursor() {
    const r = load('cursor');
    if (!r) return undefined;
    return `${microTable(r.data.pageRows, 'plain cursor')}\n\nCursor length: keyset ${r.data.cursorLength.keyset} characters, plain ${r.data.cursorLength.plain}. ${stamp(r, 'cursor')}`;
  },
  'graphql-page'() {
    const r = load('graphql-page');
    if (!r) return undefined;
    return `In memory (the rows handed over as any source would, so the cursors and the connection alone):\n\n${microTable(r.data.memory, 'plain resolver')}\n\nOn PostgreSQL (${fmt(r.data.rows)} orders, the page's query in the price):\n\n${microTable(r.data.database, 'plain resolver')}\n\nOne page of ${r.data.pageSize} in the middle of the walk, through graphql-js \`execute\`. ${stamp(r, 'graphql-page')}`;
  },
  keys() {
    const r = load('keys');
    return r && `${microTable(r.data.rows, 'naive SHA-256 + Map')}\n\n${stamp(r, 'keys')}`;
  },
  'keys-store'() {
    const r = load('keys-store');
    if (!r) return undefined;
    const l = r.data.lastUsed;
    return `${microTable(r.data.cold, 'memory store')}\n\n**lastUsedAt writes** (${l.keys} keys at ${fmt(l.requestsPerSecond)} req/s for ${l.seconds} s, real PGlite store, default 60 s interval): ${fmt(l.verifications)} verifications caused **${l.keyWritesDuringRun} key writes in ${l.storeRoundTripsDuringRun} store round trip${l.storeRoundTripsDuringRun === 1 ? "" : "s"}** during the run — ${l.writesPerKeyPerMinute} writes per key per minute (target ≤ 1) — and at most ${l.maxWritesForOneKeyIncludingClose} per key including the flush on \`close()\`. ${stamp(r, 'keys-store')}`;
  },
  'rate-limit'() {
    const r = load('rate-limit');
    if (!r) return undefined;
    const d = r.data;
    const cmds = d.redisCommandsPerDecision
      ? `\n\nRedis commands per decision (from \`INFO commandstats\`):\n\n${table(
          ['client', ...Object.keys(Object.values(d.redisCommandsPerDecision)[0] ?? {})],
          Object.entries(d.redisCommandsPerDecision).map(([k, v]) => [k, ...Object.values(v).map(String)]),
        )}`
      : '';
    return [
      `Memory, requests admitted:\n\n${microTable(d.memory, 'rate-limiter-flexible')}`,
      `Memory, requests refused (a 429 is built):\n\n${microTable(d.memoryRefused, 'rate-limiter-flexible')}`,
      d.redis ? `Redis (a local redis-server), sequential:\n\n${microTable(d.redis, 'rate-limiter-flexible')}${cmds}` : '',
      stamp(r, 'rate-limit'),
    ].filter(Boolean).join('\n\n');
  },
  'db-depth'() {
    const r = load('db-depth');
    if (!r) return undefined;
    const engines = Object.keys(r.data.results);
    const depths = r.data.results[engines[0]].depths.map((d) => d.depth);
    // Results from before the deferred join was measured have no `deferredMs`.
    const deferred = engines.every((e) => r.data.results[e].depths.every((d) => d.deferredMs !== undefined));
    const rows = depths.map((depth, i) => [
      fmt(depth),
      ...engines.flatMap((e) => {
        const d = r.data.results[e].depths[i];
        return deferred ? [fmt(d.offsetMs, 2), fmt(d.deferredMs, 2), fmt(d.keysetMs, 2)] : [fmt(d.offsetMs, 2), fmt(d.keysetMs, 2)];
      }),
    ]);
    const head = ['depth', ...engines.flatMap((e) => (deferred ? [`${e} OFFSET (before) ms`, `${e} offset page (now) ms`, `${e} keyset ms`] : [`${e} OFFSET ms`, `${e} keyset ms`]))];
    const deepest = depths.length - 1;
    const ratios = deferred
      ? `\n\nOffset page now against plain OFFSET at depth ${fmt(depths[deepest])}: ${engines
          .map((e) => {
            const d = r.data.results[e].depths[deepest];
            return `${e} ${fmt(d.deferredMs / d.offsetMs, 2)}×`;
          })
          .join(', ')}.`
      : '';
    // `@keyset/drizzle`'s form of the deferred join (`unique IN (keys)`), where the bench measured it.
    const viaDrizzle = engines
      .filter((e) => r.data.results[e].depths.every((d) => d.drizzleMs !== undefined))
      .map((e) => `\n\n${e} through \`@keyset/drizzle\` (\`IN\` over the keys): ${r.data.results[e].depths.map((d) => `${fmt(d.depth)}: ${fmt(d.drizzleMs, 2)} ms`).join(', ')}.`)
      .join('');
    const count = engines.map((e) => `${e} ${fmt(r.data.results[e].countMs, 1)} ms`).join(', ');
    // Offset mode's `total` per total mode, on the engines that measure it (PGlite, PostgreSQL).
    const counted = engines.filter((e) => r.data.results[e].totals);
    const totals = counted.length > 0 ? r.data.results[counted[0]].totals : undefined;
    const totalTable = totals
      ? `\n\nOffset mode's \`total\` per total mode (docs/pagination.md, "Totals that scale"):\n\n` +
        table(
          ['total mode', 'filter', ...counted.map((e) => `${e} ms`), 'reports (PostgreSQL, else PGlite)', 'exact'],
          totals.map((t, i) => {
            const shown = (r.data.results.PostgreSQL ?? r.data.results[counted[0]]).totals[i];
            return [t.mode, t.filter, ...counted.map((e) => fmt(r.data.results[e].totals[i].ms, 2)), shown.value === null ? 'null' : `${fmt(shown.value)}${t.mode.startsWith('exact, cap') && shown.value < shown.exact ? '+' : ''}`, fmt(shown.exact)];
          }),
        )
      : '';
    const busy = r.data.loadAverage ? ` Load average (1 min) at start and end: ${r.data.loadAverage.map((l) => fmt(l, 1)).join(' and ')} on ${r.data.cores} cores.` : '';
    return `${table(head, rows)}${ratios}${viaDrizzle}\n\n\`SELECT count(*)\` over ${fmt(r.data.rows)} rows (offset mode's \`total\`): ${count}.${totalTable}\n\n${stamp(r, 'db-depth')}${busy}`;
  },
  memory() {
    const r = load('memory');
    if (!r) return undefined;
    const s = r.data.summary;
    return `${fmt(s.keys)} distinct unknown keys in ${fmt(s.seconds, 1)} s (${fmt(s.requestsPerSecond)} req/s, every answer a 401: ${s.non401 === 0 ? 'yes' : `no, ${s.non401} were not`}). Server RSS: ${s.rssStartMiB} MiB at start, ${s.rssHalfMiB} MiB at half-way, ${s.rssEndMiB} MiB at the end (peak ${s.rssPeakMiB} MiB); growth over the second half: **${s.growthSecondHalfMiB} MiB**. ${stamp(r, 'memory')}`;
  },
  capacity() {
    const r = load('capacity');
    if (!r) return undefined;
    const d = r.data;
    const rows = d.rows.map((t) => [
      t.store,
      t.operation,
      fmt(t.roundTrips, 0),
      t.commandsInside === undefined ? '–' : fmt(t.commandsInside, 1),
      `${fmt(t.bytesToServer)} / ${fmt(t.bytesFromServer)}`,
      t.commandMicros === undefined ? '–' : fmt(t.commandMicros, 1),
      fmt(t.serverCpuMicros, 1),
      fmt(t.ceilingPerCore),
      fmt(t.opsPerSecond),
      t.walBytes === undefined ? '–' : fmt(t.walBytes),
    ]);
    const head = ['store', 'operation', 'round trips', 'commands in the script', 'bytes to / from the server', 'Redis command µs per op (commandstats)', 'server CPU µs per op', 'ceiling: ops/s per Redis thread or primary core', 'ops/s reached here', 'WAL bytes per op'];
    return `${table(head, rows)}\n\n${fmt(d.keys)} keys, ${fmt(d.owners)} owners, ${d.concurrency.redis} concurrent callers on Redis (${d.redisServer}), ${d.concurrency.postgres} connections on ${d.postgresServer ?? 'PostgreSQL (skipped)'}, ${d.seconds} s per operation${d.wholeRounds ? ` (the two every-feature rows in ${d.wholeRounds} alternating turns each)` : ''}, load generator on the same machine. ${stamp(r, 'capacity')}`;
  },
  'capacity-http'() {
    const r = load('capacity');
    if (!r?.data.http) return undefined;
    const h = r.data.http;
    return `${latencyTable(h)}\n\n${hammerTable(h)}\n\n${httpSettings(h)} ${stamp(r, 'capacity')}`;
  },
  'framework-hooks'() {
    const r = load('framework-hooks');
    if (!r) return undefined;
    const rows = r.data.rows.map((t) => [t.framework, t.variant, fmt(t['µs/req'], 2), fmt(t['µs over bare'], 2)]);
    return `${table(['framework', 'variant', 'CPU µs/request', 'CPU µs over bare (median of rounds)'], rows)}\n\n${r.data.rounds} rounds × ${fmt(r.data.batch)} requests per variant, one process per framework. ${stamp(r, 'framework-hooks')}`;
  },
  'inprocess-ab'() {
    const r = load('inprocess-ab');
    if (!r) return undefined;
    const rows = r.data.rows.map((t) => [t.stack, fmt(t['base over bare'], 2), fmt(t['head over bare'], 2), fmt(t['head − base'], 2), t['head − base IQR']]);
    return `${table(['stack', 'base: CPU µs over bare Hono', 'head: CPU µs over bare Hono', 'head − base (median of rounds)', 'interquartile'], rows)}\n\nBare Hono ${fmt(r.data.bare, 2)} CPU µs/request; ${r.data.rounds} rounds × ${fmt(r.data.batch)} requests, ${fmt(r.data.keys)} keys. ${stamp(r, 'inprocess-ab')}`;
  },
  usage() {
    const r = load('usage');
    if (!r) return undefined;
    const { ab, flush, storage } = r.data;
    const rows = [
      ['counting cost on the full Hono stack (with − without the counter, median of rounds)', `${fmt(ab.costUs, 2)} CPU µs/request (interquartile ${ab.costIqrUs}; ${fmt(ab.withoutUs, 1)} without)`],
      ['the same A/B on limiter.check() alone (the event built, the hook, record())', ab.checkCostNs === undefined ? '–' : `${fmt(ab.checkCostNs)} CPU ns/request (interquartile ${ab.checkIqrNs})`],
      ['of which the counter\'s record() alone', ab.recordNs === undefined ? '–' : `${fmt(ab.recordNs)} CPU ns/event`],
      [`one flush of ${fmt(flush.keys)} keys on ${flush.engine}`, `${flush.statementsPerFlush} statement, ${fmt(flush.rowsPerFlush)} rows; ${fmt(flush.firstOfMinuteMs, 0)} ms first in a minute, ${fmt(flush.laterInMinuteMs, 0)} ms later`],
      ['statements per second per instance (USAGE_FLUSH_MS 5000)', fmt(flush.statementsPerSecondAt5s, 1)],
      [`storage: ${fmt(storage.requests)} requests over a day, ${fmt(storage.keys)} keys (Zipf)`, `${fmt(storage.keyMinutes)} key-minutes, ${fmt(storage.rows)} rows, ${fmt(storage.bytes / 1e6, 2)} MB with indexes (${fmt(storage.bytesPerRow, 0)} B/row)`],
    ];
    return `${table(['measure', 'figure'], rows)}\n\n${r.data.rounds} rounds × ${fmt(r.data.batch)} requests per stack, ${fmt(r.data.keys)} keys. ${stamp(r, 'usage')}`;
  },
};

/** Rewrites every `<!-- bench:NAME -->` section of `file` that `renders` has a result for. */
function rewrite(file, renders) {
  let text = readFileSync(file, 'utf8');
  for (const [name, render] of Object.entries(renders)) {
    const body = render();
    if (body === undefined) continue;
    const pattern = new RegExp(`(<!-- bench:${name} -->)[\\s\\S]*?(<!-- /bench:${name} -->)`);
    if (!pattern.test(text)) {
      console.warn(`${file} has no bench:${name} section`);
      continue;
    }
    text = text.replace(pattern, (_m, open, close) => `${open}\n${body}\n${close}`);
  }
  writeFileSync(file, text);
}

rewrite(doc, sections);
rewrite(join(root, 'docs', 'scaling.md'), scalingSections);
console.log('docs/benchmarks.md and docs/scaling.md updated from bench/results/');
