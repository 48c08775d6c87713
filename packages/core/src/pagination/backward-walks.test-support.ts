/**
 * The backward-walk checks every source runs (memory, PGlite, PostgreSQL): walking back
 * with `prevCursor` revisits the forward walk's pages in reverse, and under concurrent
 * writes sees every row present throughout exactly once. Test fixture only.
 * @module
 */
import { expect } from 'vitest';
import type { Paginator } from './paginator.ts';
import type { PagePlan, SortKey } from './types.ts';
import { followCursor, referenceCompare, walkBack, walkCursorPages, type Item, type WalkedPage } from './walk.test-support.ts';

const ids = (page: WalkedPage): string[] => page.items.map((r) => r.id);

/**
 * Static data: from the last page and from page `k`, walking back visits exactly the
 * forward pages before it, in reverse, and ends with `prevCursor: null` on the first
 * page; each page met on the way back leads forward (`nextCursor`) to the page after it.
 */
export async function checkBackwardStatic(
  paginator: Paginator<Item>,
  fetch: (plan: PagePlan) => Promise<Item[]>,
  limit: number,
  k: number,
): Promise<void> {
  const forward = await walkCursorPages(paginator, fetch, limit);
  const last = forward.length - 1;
  const fromLast = await walkBack(paginator, fetch, limit, forward[last]!);
  expect(fromLast.map(ids)).toEqual(forward.slice(0, last).reverse().map(ids));
  const start = k % forward.length;
  const back = await walkBack(paginator, fetch, limit, forward[start]!);
  expect(back.map(ids)).toEqual(forward.slice(0, start).reverse().map(ids));
  for (let j = 0; j < back.length; j++) {
    const page = back[j]!;
    expect(page.nextCursor).not.toBeNull();
    expect(ids(await followCursor(paginator, fetch, limit, page.nextCursor!))).toEqual(ids(forward[start - j]!));
  }
}

/** A mutable collection under test: what is in it now, and how to change it. */
export interface LiveCollection {
  fetch: (plan: PagePlan) => Promise<Item[]>;
  /** Random deletes and inserts; resolves the ids deleted. */
  mutate: () => Promise<string[]>;
  /** Ids in the collection now. */
  ids: () => Promise<string[]>;
  /**
   * The generated item a fetched row stands for, when the database spells values its own
   * way (a zone-less DATETIME, `1.50`): order is checked on the generated values.
   * @default the row itself
   */
  original?: (row: Item) => Item;
}

/**
 * Inserts and deletes between every fetch, forward to the end and then back to the start:
 * in each direction every row present for that whole walk appears exactly once, and the
 * rows come in a consistent order.
 */
export async function checkBothWaysConcurrent(paginator: Paginator<Item>, sort: SortKey[], limit: number, live: LiveCollection): Promise<void> {
  const reference = referenceCompare(sort);
  const original = live.original ?? ((row: Item) => row);
  const compare = (a: Item, b: Item): number => reference(original(a), original(b));
  const deleted = new Set<string>();
  const mutate = async (): Promise<void> => {
    for (const id of await live.mutate()) deleted.add(id);
  };
  const before = await live.ids();
  const forward = await walkCursorPages(paginator, live.fetch, limit, mutate);
  const seenForward = forward.flatMap((p) => p.items);
  expectOnceAndOrdered(seenForward, before, deleted, compare);

  // The walk back starts from the last forward page as it was read; no write happened
  // since, so the rows present then are the rows present now.
  deleted.clear();
  const atStart = await live.ids();
  const lastPage = forward[forward.length - 1]!;
  const back = await walkBack(paginator, live.fetch, limit, lastPage, mutate);
  const seenBackward = [...back].reverse().flatMap((p) => p.items).concat(lastPage.items);
  expectOnceAndOrdered(seenBackward, atStart, deleted, compare);
}

function expectOnceAndOrdered(seen: Item[], present: string[], deleted: Set<string>, compare: (a: Item, b: Item) => number): void {
  const seenIds = seen.map((r) => r.id);
  expect(new Set(seenIds).size).toBe(seenIds.length);
  for (const id of present) if (!deleted.has(id)) expect(seenIds).toContain(id);
  for (let i = 1; i < seen.length; i++) expect(compare(seen[i - 1]!, seen[i]!)).toBeLessThan(0);
}
