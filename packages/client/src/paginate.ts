/**
 * Walks a paginated collection, forward or backward: cursor mode (`nextCursor`,
 * `prevCursor`), offset mode (`total`) or any API that sends RFC 8288
 * `Link: <…>; rel="next"` (and `rel="prev"`) headers.
 * @module
 */
import { PaginationCycleError, PaginationFormatError, PaginationHttpError } from './errors.ts';
import { assertKnownOptions, type KnownOptions } from './known-options.ts';
import { findLink } from './link-header.ts';

/** Options of {@link paginate} and {@link pages}. */
export interface PaginateOptions {
  /**
   * `'backward'` starts at the given URL (typically a page reached earlier, or a URL with
   * a `prevCursor`) and follows `rel="prev"` / `prevCursor` / the previous offset down to
   * the first page. `pages()` still yields each page's items in the server's order;
   * `paginate()` yields items in reverse, so the stream runs backward too.
   * @default 'forward'
   */
  direction?: 'forward' | 'backward';
  /** Sent as `Authorization: ApiKey <apiKey>`. Never put it in the URL. */
  apiKey?: string | undefined;
  /** Extra request headers. */
  headers?: Record<string, string>;
  /**
   * The fetch implementation.
   * @default globalThis.fetch
   */
  fetch?: (input: string, init: RequestInit) => Promise<Response>;
  /**
   * Stop after this many pages.
   * @default Infinity
   */
  maxPages?: number;
  /** Aborts the walk, including a pending `Retry-After` wait. */
  signal?: AbortSignal;
  /**
   * How many 429 answers in a row to wait out (honouring `Retry-After`) before throwing.
   * @default 3
   */
  maxRetries?: number;
  /**
   * The longest `Retry-After` wait accepted, in seconds; a longer one throws at once.
   * @default 60
   */
  maxRetryAfterSeconds?: number;
}

/** Every name `PaginateOptions` knows, checked when a walk starts. */
const PAGINATE_OPTIONS = {
  direction: true,
  apiKey: true,
  headers: true,
  fetch: true,
  maxPages: true,
  signal: true,
  maxRetries: true,
  maxRetryAfterSeconds: true,
} as const satisfies KnownOptions<PaginateOptions>;

/** One fetched page. */
export interface Page<T> {
  items: T[];
  /** The URL this page was read from. */
  url: string;
  /** The next page's URL, or `null` on the last page. */
  next: string | null;
  /** The previous page's URL, or `null` on the first page (or when the server offers none). */
  prev: string | null;
  /** `total` in offset mode, when the server sent it. */
  total: number | undefined;
  /** `true` when `total` is the server's estimate (`totalEstimated`), not a count. */
  totalEstimated: boolean;
  /** `true` when the collection has at least `total` items (a capped count: `totalAtLeast`). */
  totalAtLeast: boolean;
}

/**
 * Iterates over every item of a collection, page by page.
 *
 * @example
 * ```ts
 * for await (const order of paginate<Order>('http://127.0.0.1:3000/api/orders?limit=100', { apiKey })) {
 *   console.log(order.id);
 * }
 * ```
 */
export async function* paginate<T = unknown>(url: string | URL, options: PaginateOptions = {}): AsyncGenerator<T, void, undefined> {
  assertKnownOptions('paginate', options, PAGINATE_OPTIONS);
  const backward = options.direction === 'backward';
  for await (const page of pages<T>(url, options)) {
    if (!backward) yield* page.items;
    else for (let i = page.items.length - 1; i >= 0; i--) yield page.items[i] as T;
  }
}

/**
 * Iterates over the pages of a collection. Follows the `Link` rel="next" header when
 * present, else `nextCursor`, else `offset`/`total` (backward: rel="prev", else
 * `prevCursor`, else the previous offset). Throws {@link PaginationCycleError}
 * when the server leads back to a page already read, and {@link PaginationFormatError}
 * when it points to another origin (the key is never sent there).
 *
 * @example
 * ```ts
 * for await (const page of pages('http://127.0.0.1:3000/api/orders', { apiKey, maxPages: 5 })) {
 *   console.log(page.items.length, page.next);
 * }
 * ```
 */
export async function* pages<T = unknown>(url: string | URL, options: PaginateOptions = {}): AsyncGenerator<Page<T>, void, undefined> {
  assertKnownOptions('pages', options, PAGINATE_OPTIONS);
  const { maxPages = Infinity, signal, direction = 'forward' } = options;
  if (direction !== 'forward' && direction !== 'backward') throw new TypeError(`direction must be 'forward' or 'backward'`);
  const seen = new Set<string>();
  let next: string | null = new URL(url).href;
  // The key (and any caller headers) go only to the origin the caller chose: a next link
  // elsewhere, hostile or misconfigured, would receive them with the request.
  const origin = new URL(next).origin;
  let count = 0;
  while (next !== null && count < maxPages) {
    if (seen.has(next)) throw new PaginationCycleError(next);
    if (new URL(next).origin !== origin) {
      throw new PaginationFormatError(next, `the next page is on another origin than ${origin}; not following it with your credentials`);
    }
    seen.add(next);
    signal?.throwIfAborted();
    const { body, link } = await fetchPage(next, options);
    const page: Page<T> = {
      items: body.items as T[],
      url: next,
      next: nextUrl(next, body, link),
      prev: prevUrl(next, body, link),
      total: body.total,
      totalEstimated: body.totalEstimated,
      totalAtLeast: body.totalAtLeast,
    };
    count++;
    yield page;
    next = direction === 'forward' ? page.next : page.prev;
  }
}

interface Envelope {
  items: unknown[];
  nextCursor?: unknown;
  prevCursor?: unknown;
  total: number | undefined;
  /** The body has a `total` member that is `null`: offset mode on an endpoint that does not count. */
  uncounted: boolean;
  totalEstimated: boolean;
  totalAtLeast: boolean;
}

async function fetchPage(url: string, options: PaginateOptions): Promise<{ body: Envelope; link: string | null }> {
  const { apiKey, headers = {}, fetch: doFetch = globalThis.fetch, signal, maxRetries = 3, maxRetryAfterSeconds = 60 } = options;
  const init: RequestInit = { headers: { accept: 'application/json', ...headers } };
  if (apiKey !== undefined) (init.headers as Record<string, string>).authorization = `ApiKey ${apiKey}`;
  if (signal) init.signal = signal;
  for (let attempt = 0; ; attempt++) {
    const response = await doFetch(url, init);
    if (response.status === 429 && attempt < maxRetries) {
      const wait = retryAfterSeconds(response.headers.get('retry-after'));
      if (wait !== undefined && wait <= maxRetryAfterSeconds) {
        await response.body?.cancel();
        await sleep(wait * 1000, signal);
        continue;
      }
    }
    if (!response.ok) throw new PaginationHttpError(response.status, url, await readProblem(response));
    const body = (await response.json().catch(() => undefined)) as Record<string, unknown> | undefined;
    if (!body || !Array.isArray(body.items)) throw new PaginationFormatError(url, 'response has no `items` array');
    const total = typeof body.total === 'number' ? body.total : undefined;
    return {
      body: {
        items: body.items,
        nextCursor: body.nextCursor,
        prevCursor: body.prevCursor,
        total,
        uncounted: body.total === null,
        totalEstimated: body.totalEstimated === true,
        totalAtLeast: body.totalAtLeast === true,
      },
      link: response.headers.get('link'),
    };
  }
}

function nextUrl(current: string, body: Envelope, link: string | null): string | null {
  const fromLink = findLink(link, 'next', current);
  if (fromLink !== undefined) return fromLink;
  if (typeof body.nextCursor === 'string' && body.nextCursor !== '') {
    const u = new URL(current);
    u.searchParams.delete('offset');
    u.searchParams.set('cursor', body.nextCursor);
    return u.href;
  }
  if ((body.total !== undefined || body.uncounted) && body.items.length > 0) {
    const u = new URL(current);
    const offset = Number(u.searchParams.get('offset') ?? '0') + body.items.length;
    // Only an exact total ends the walk early; an estimate, a capped count or no count
    // (`total: null`) walks on until an empty page.
    const exact = body.total !== undefined && !body.totalEstimated && !body.totalAtLeast;
    if (exact && offset >= body.total!) return null;
    u.searchParams.set('offset', String(offset));
    return u.href;
  }
  return null;
}

function prevUrl(current: string, body: Envelope, link: string | null): string | null {
  const fromLink = findLink(link, 'prev', current);
  if (fromLink !== undefined) return fromLink;
  if (typeof body.prevCursor === 'string' && body.prevCursor !== '') {
    const u = new URL(current);
    u.searchParams.delete('offset');
    u.searchParams.set('cursor', body.prevCursor);
    return u.href;
  }
  if (body.total !== undefined || body.uncounted) {
    const u = new URL(current);
    const offset = Number(u.searchParams.get('offset') ?? '0');
    const size = Number(u.searchParams.get('limit') ?? body.items.length);
    if (!(offset > 0) || !(size > 0)) return null;
    u.searchParams.set('offset', String(Math.max(0, offset - size)));
    return u.href;
  }
  return null;
}

/** `Retry-After` is delay-seconds or an HTTP-date (RFC 9110 §10.2.3). */
export function retryAfterSeconds(value: string | null): number | undefined {
  if (value === null) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text);
  // An HTTP-date starts with a day name (IMF-fixdate, RFC 850, asctime). Date.parse alone
  // reads junk such as '1.5' or '-1' as long-past dates, i.e. "retry at once".
  if (!/^(mon|tue|wed|thu|fri|sat|sun)[a-z]*,? /i.test(text)) return undefined;
  const date = Date.parse(text);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, Math.ceil((date - Date.now()) / 1000));
}

async function readProblem(response: Response): Promise<Record<string, unknown> | undefined> {
  const type = response.headers.get('content-type') ?? '';
  if (!type.includes('json')) {
    await response.body?.cancel();
    return undefined;
  }
  const body = (await response.json().catch(() => undefined)) as unknown;
  return typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : undefined;
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
