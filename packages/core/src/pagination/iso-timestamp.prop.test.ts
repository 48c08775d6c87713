/**
 * `isoTimestamp` against PostgreSQL itself (PGlite, and a real server when one answers):
 * for random instants to the microsecond and random session zones, the text PostgreSQL
 * prints becomes exactly what PostgreSQL prints for the same instant with `to_char` in UTC,
 * and keyset's own timestamp parser reads both as the same instant.
 */
import type { PGlite } from '@electric-sql/pglite';
import { createPglite, postgresUrl } from '@keyset/test-support';
import fc from 'fast-check';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseTimestamp } from '../internal/timestamp.ts';
import { isoTimestamp } from './iso-timestamp.ts';

const ISO_MICROS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/;
const ZONES = ['UTC', 'Asia/Kathmandu', 'America/St_Johns', 'Pacific/Chatham', 'Europe/Amsterdam', 'America/Los_Angeles', 'Africa/Monrovia'];

const pad = (n: number, width = 2): string => String(n).padStart(width, '0');
/** A UTC instant in years 2–9998 to the microsecond, as a literal PostgreSQL reads exactly. */
const instants = fc
  .record({
    year: fc.integer({ min: 2, max: 9998 }),
    month: fc.integer({ min: 1, max: 12 }),
    day: fc.integer({ min: 1, max: 28 }),
    hour: fc.integer({ min: 0, max: 23 }),
    minute: fc.integer({ min: 0, max: 59 }),
    second: fc.integer({ min: 0, max: 59 }),
    micros: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 999_999 })),
  })
  .map((t) => `${pad(t.year, 4)}-${pad(t.month)}-${pad(t.day)} ${pad(t.hour)}:${pad(t.minute)}:${pad(t.second)}.${pad(t.micros, 6)}+00`);

interface Engine {
  query(text: string, params: unknown[]): Promise<Array<Record<string, string>>>;
  close(): Promise<void>;
}

const QUERY = `SELECT ts::text AS printed, to_char(ts AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS utc
  FROM (SELECT $1::timestamptz AS ts) t`;

function check(engine: () => Engine): void {
  it('turns what PostgreSQL prints in any zone into the UTC ISO text of the same instant', async () => {
    await fc.assert(
      fc.asyncProperty(instants, fc.constantFrom(...ZONES), async (literal, zone) => {
        await engine().query(`SET TIME ZONE '${zone}'`, []);
        const [row] = await engine().query(QUERY, [literal]);
        const iso = isoTimestamp(row!.printed!);
        expect(iso).toBe(row!.utc);
        expect(iso).toMatch(ISO_MICROS);
        expect(parseTimestamp(iso)).toEqual(parseTimestamp(row!.printed!));
      }),
      { numRuns: 150 },
    );
  });
}

const url = await postgresUrl();

describe('isoTimestamp', () => {
  it('keeps what ISO cannot spell, and text that is no timestamp, as printed', () => {
    for (const text of ['infinity', '-infinity', '0044-03-15 12:00:00+00 BC', '10000-01-01 00:00:00+00', 'not a time', '']) {
      expect(isoTimestamp(text)).toBe(text);
    }
    expect(isoTimestamp('2025-01-01 00:00:00+00')).toBe('2025-01-01T00:00:00.000000Z');
    expect(isoTimestamp('2025-01-01 05:45:00.1237+05:45')).toBe('2025-01-01T00:00:00.123700Z');
    expect(isoTimestamp('2024-12-31 16:00:00.000001-08')).toBe('2025-01-01T00:00:00.000001Z');
    expect(isoTimestamp('2025-01-01T00:00:00.123789Z')).toBe('2025-01-01T00:00:00.123789Z');
  });

  describe('on PGlite', () => {
    let db: PGlite;
    beforeAll(async () => {
      db = await createPglite();
    });
    afterAll(() => db.close());
    check(() => ({ query: async (text, params) => (await db.query<Record<string, string>>(text, params)).rows, close: () => db.close() }));
  });

  describe.skipIf(url === undefined)('on PostgreSQL', () => {
    let client: pg.Client;
    beforeAll(async () => {
      client = new pg.Client({ connectionString: url });
      await client.connect();
    });
    afterAll(() => client.end());
    check(() => ({ query: async (text, params) => (await client.query<Record<string, string>>(text, params)).rows, close: () => client.end() }));
  });
});
