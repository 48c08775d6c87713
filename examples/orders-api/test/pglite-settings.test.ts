/**
 * The embedded database runs with a small buffer cache: PGlite's memory never shrinks,
 * so PostgreSQL's default 128MB of shared buffers would stay in the idle example's memory.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openPglite } from '../src/db/database.ts';
import { tempDir } from './helpers.ts';

describe('embedded PGlite settings', () => {
  const dataDir = tempDir('orders-pglite-settings-');
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('opens with shared_buffers at 8MB, on creation and on reopening', async () => {
    for (let open = 0; open < 2; open++) {
      const db = await openPglite(join(dataDir, 'pgdata'));
      try {
        const { rows } = await db.query<{ shared_buffers: string }>('SHOW shared_buffers');
        expect(rows[0]!.shared_buffers).toBe('8MB');
      } finally {
        await db.close();
      }
    }
  });
});
