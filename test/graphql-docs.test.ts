/**
 * docs/graphql.md's server, as written: the sample under "A server" runs as a reader runs
 * it (`node --import tsx`, NODE_ENV=development, PORT=0), and the connection it serves over
 * the example's orders table is walked over HTTP with the key it prints: every one of the
 * 1,000 orders once, newest first, forward with first/after and backward with last/before,
 * microseconds kept; the status filter bound into the cursors; totalCount; the page's own
 * curl request; no key, no page.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { samples } from './support/docs-samples.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const dir = join(root, '.docs-run', `graphql-${process.pid}`);
const doc = readFileSync(join(root, 'docs', 'graphql.md'), 'utf8');
const docLines = doc.split('\n');

/** The first ```ts block after `## A server`. */
function serverSample(): string {
  const heading = docLines.indexOf('## A server') + 1;
  const found = samples().find((s) => s.file === 'docs/graphql.md' && s.line > heading);
  if (found === undefined) throw new Error('docs/graphql.md has no sample under "## A server"');
  return found.code;
}

/** The JSON body of the page's curl request (`-d '…'`). */
function curlBody(): string {
  const at = doc.indexOf('curl -s http://127.0.0.1:4000/graphql');
  const body = /-d '([^']+)'/.exec(doc.slice(at))?.[1];
  if (at < 0 || body === undefined) throw new Error('docs/graphql.md has no curl request to its server');
  return body;
}

let child: ChildProcess;
let url: string;
let key: string;

beforeAll(async () => {
  mkdirSync(dir, { recursive: true });
  const file = join(dir, 'server.mts');
  writeFileSync(file, `${serverSample()}\nexport {};\n`);
  const { NODE_ENV: _n, CURSOR_SECRET: _c, ...inherited } = process.env;
  child = spawn(process.execPath, ['--import', 'tsx', file], {
    cwd: root,
    env: { ...inherited, TSX_TSCONFIG_PATH: join(root, 'tsconfig.json'), NODE_ENV: 'development', PORT: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => void (err += chunk));
  await new Promise<void>((resolve, reject) => {
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      out += chunk;
      const printedUrl = /(http:\/\/127\.0\.0\.1:\d+\/graphql)/.exec(out)?.[1];
      const printedKey = /ApiKey (\S+)/.exec(out)?.[1];
      if (printedUrl !== undefined && printedKey !== undefined) {
        [url, key] = [printedUrl, printedKey];
        resolve();
      }
    });
    child.once('exit', (code) => reject(new Error(`the sample exited (${code}) before serving:\n${out}\n${err.slice(-3000)}`)));
  });
}, 120_000);

afterAll(() => {
  child?.kill('SIGTERM');
  rmSync(dir, { recursive: true, force: true });
});

interface Page {
  edges: { cursor: string; node: { id: string; createdAt: string; status: string } }[];
  pageInfo: { hasNextPage: boolean; hasPreviousPage: boolean; startCursor: string | null; endCursor: string | null };
  totalCount?: number;
}
type Body = { data?: { orders: Page } | null; errors?: { message: string; extensions?: Record<string, unknown> }[] };

async function post(body: string, withKey = true): Promise<{ status: number; body: Body }> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...(withKey ? { authorization: `ApiKey ${key}` } : {}) }, body });
  return { status: res.status, body: (await res.json()) as Body };
}
const QUERY = 'query ($first: Int, $after: String, $last: Int, $before: String, $status: String) { orders(first: $first, after: $after, last: $last, before: $before, status: $status) { edges { cursor node { id createdAt status } } pageInfo { hasNextPage hasPreviousPage startCursor endCursor } } }';
async function page(variables: Record<string, unknown>): Promise<Page> {
  const { status, body } = await post(JSON.stringify({ query: QUERY, variables }));
  expect(body.errors).toBeUndefined();
  expect(status).toBe(200);
  return body.data!.orders;
}

/** Walks the whole connection one way in pages of `size`; the nodes in the connection's order. */
async function walk(direction: 'forward' | 'backward', size: number, status?: string): Promise<Page['edges'][number]['node'][]> {
  const pages: Page['edges'][number]['node'][][] = [];
  let cursor: string | null = null;
  for (;;) {
    const p: Page = await page(direction === 'forward' ? { first: size, after: cursor, status } : { last: size, before: cursor, status });
    const nodes = p.edges.map((e) => e.node);
    if (direction === 'forward') pages.push(nodes);
    else pages.unshift(nodes);
    if (!(direction === 'forward' ? p.pageInfo.hasNextPage : p.pageInfo.hasPreviousPage)) break;
    cursor = direction === 'forward' ? p.pageInfo.endCursor : p.pageInfo.startCursor;
    expect(pages.length).toBeLessThan(100);
  }
  return pages.flat();
}

// The sample's seed: order n at floor(n / 3) steps of 61.000123 s, so newest first is id 1000 down to 1.
const NEWEST_FIRST = Array.from({ length: 1000 }, (_, i) => String(1000 - i));
/** Order n's created_at as the seed computes it, to the microsecond, in the sample's format. */
function seededAt(n: number): string {
  const micros = BigInt(Math.floor(n / 3)) * 61_000_123n;
  const iso = new Date(Date.UTC(2025, 0, 1) + Number(micros / 1000n)).toISOString();
  return `${iso.slice(0, -1)}${String(micros % 1000n).padStart(3, '0')}Z`;
}

describe('docs/graphql.md: the server, as written, walked over HTTP', () => {
  it('forward with first/after and backward with last/before: every order once, newest first, ties broken by id, microseconds kept', async () => {
    const forward = await walk('forward', 100);
    expect(forward.map((o) => o.id)).toEqual(NEWEST_FIRST);
    const backward = await walk('backward', 70);
    expect(backward.map((o) => o.id)).toEqual(NEWEST_FIRST);
    // Three orders share each timestamp (1000 and 999 one, 998 to 996 the next), with its
    // microseconds below the millisecond, as the seed wrote it.
    expect(forward.map((o) => o.createdAt)).toEqual(NEWEST_FIRST.map((id) => seededAt(Number(id))));
    expect(forward[0]!.createdAt).toBe('2025-01-01T05:38:33.040959Z');
  }, 120_000);

  it('the status filter is bound into the cursors, totalCount counts it, and the page\'s curl request is answered', async () => {
    const paid = await walk('forward', 100, 'paid');
    expect(paid.map((o) => o.id)).toEqual(NEWEST_FIRST.filter((id) => Number(id) % 4 !== 0));
    const first = await page({ first: 2, status: 'paid' });
    const crossed = await post(JSON.stringify({ query: QUERY, variables: { first: 2, after: first.pageInfo.endCursor, status: 'refunded' } }));
    expect(crossed.body.errors?.map((e) => e.extensions?.code)).toEqual(['invalid_cursor']);
    const counted = await post(JSON.stringify({ query: '{ orders(first: 1, status: "refunded") { totalCount } }' }));
    expect(counted.body.data?.orders.totalCount).toBe(250);
    const curl = await post(curlBody());
    expect(curl.status).toBe(200);
    const tail = curl.body.data!.orders;
    expect(tail.edges.map((e) => e.node.id)).toEqual(['2', '1']);
    expect(tail.pageInfo.hasPreviousPage).toBe(true);
  }, 120_000);

  it('no key: HTTP 401 missing_api_key, nothing served', async () => {
    const { status, body } = await post(JSON.stringify({ query: '{ orders(first: 1) { totalCount } }' }), false);
    expect(status).toBe(401);
    expect(body.errors?.map((e) => e.extensions?.code)).toEqual(['missing_api_key']);
  });
});
