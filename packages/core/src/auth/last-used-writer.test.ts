import fc from 'fast-check';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { KeyStore } from '../keys/key-store.ts';
import { LastUsedWriter, type LastUse } from './last-used-writer.ts';

function tracked(writer: LastUsedWriter, digest: string, at: number): LastUse {
  const record: LastUse = { digest, at, queued: 0, batch: 0 };
  writer.track(record);
  return record;
}

type Update = { digest: string; at: Date };

function recordingStore(): { store: KeyStore; batches: Update[][]; fail: { now: boolean } } {
  const batches: Update[][] = [];
  const fail = { now: false };
  const store = {
    touchLastUsed(updates: readonly Update[]): Promise<void> {
      batches.push([...updates]);
      return fail.now ? Promise.reject(new Error('store down')) : Promise.resolve();
    },
  } as unknown as KeyStore;
  return { store, batches, fail };
}

const asPairs = (batch: Update[] | undefined) => (batch ?? []).map((u) => [u.digest, u.at.getTime()]).sort();

afterEach(() => {
  vi.useRealTimers();
});

describe('LastUsedWriter records (track / use)', () => {
  it('writes the latest use of a tracked digest once per interval, with no write per use', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const { store, batches } = recordingStore();
    const writer = new LastUsedWriter(store, 1000, () => {});
    const a = tracked(writer, 'aa', 10);
    const b = tracked(writer, 'bb', 11);
    for (let t = 12; t < 5000; t++) writer.use(t % 2 === 0 ? a : b, t);
    expect(batches).toHaveLength(0);
    expect(writer.pending('aa')).toBe(4998);
    expect(writer.pending('bb')).toBe(4999);
    await vi.advanceTimersByTimeAsync(1000);
    expect(batches.map(asPairs)).toEqual([[['aa', 4998], ['bb', 4999]]]);
    // Nothing used since: no write. A use, even at the very same instant, is written next interval.
    await vi.advanceTimersByTimeAsync(3000);
    expect(batches).toHaveLength(1);
    writer.use(a, 4998);
    expect(writer.pending('aa')).toBe(4998);
    await vi.advanceTimersByTimeAsync(1000);
    expect(batches.map(asPairs)).toEqual([[['aa', 4998], ['bb', 4999]], [['aa', 4998]]]);
  });

  it('merges records, touch and a failed batch into the latest time per digest', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const { store, batches, fail } = recordingStore();
    const errors: number[] = [];
    const writer = new LastUsedWriter(store, 1000, (_error, count) => errors.push(count));
    const first = tracked(writer, 'aa', 10);
    const second = tracked(writer, 'aa', 5); // a second cache entry for the same digest
    writer.use(second, 20);
    writer.use(first, 15);
    writer.touch('aa', 12);
    expect(writer.pending('aa')).toBe(20);
    fail.now = true;
    await vi.advanceTimersByTimeAsync(1000);
    expect(errors).toEqual([1]);
    expect(writer.pending('aa')).toBe(20);
    fail.now = false;
    writer.use(first, 30);
    await vi.advanceTimersByTimeAsync(1000);
    expect(batches.map(asPairs)).toEqual([[['aa', 20]], [['aa', 30]]]);
  });

  it('ignores uses after close and writes what was pending on close', async () => {
    const { store, batches } = recordingStore();
    const writer = new LastUsedWriter(store, 60_000, () => {});
    const a = tracked(writer, 'aa', 1);
    writer.use(a, 2);
    expect(await writer.close()).toEqual({ ok: true });
    writer.use(a, 3);
    expect(batches.map(asPairs)).toEqual([[['aa', 2]]]);
    expect(writer.pending('aa')).toBeUndefined();
  });

  it('pending() is the maximum of every use since the last write, records or touch alike', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ record: fc.integer({ min: -1, max: 3 }), digest: fc.constantFrom('aa', 'bb'), at: fc.integer({ min: 0, max: 100 }) }), { maxLength: 60 }),
        (uses) => {
          const { store } = recordingStore();
          const writer = new LastUsedWriter(store, 60_000, () => {});
          const records = new Map<string, LastUse[]>();
          const latest = new Map<string, number>();
          for (const { record, digest, at } of uses) {
            const list = records.get(digest) ?? [];
            records.set(digest, list);
            if (record < 0) writer.touch(digest, at);
            else if (record >= list.length) list.push(tracked(writer, digest, at));
            else writer.use(list[record]!, at);
            latest.set(digest, Math.max(latest.get(digest) ?? -Infinity, at));
          }
          for (const digest of ['aa', 'bb']) expect(writer.pending(digest)).toBe(latest.get(digest));
          void writer.close();
        },
      ),
    );
  });
});
