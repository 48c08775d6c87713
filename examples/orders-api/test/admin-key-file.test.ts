/**
 * The admin key file belongs to its database: one DATA_DIR used with the embedded database,
 * then with a PostgreSQL server, then with the embedded one again, keeps a working admin
 * key for each, and a start whose database refuses `admin.key` says so and what to do.
 */
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { postgresUrl } from '@keyset/test-support';
import { afterAll, describe, expect, it } from 'vitest';
import { databaseLabel } from '../src/keys/bootstrap-admin-key.ts';
import { call, createDatabase, dropDatabase, startApi, tempDir } from './helpers.ts';

const serverUrl = await postgresUrl();

describe('databaseLabel', () => {
  it('names the embedded database and a server database without credentials', () => {
    expect(databaseLabel(undefined)).toBe('embedded');
    expect(databaseLabel('postgres://app:secret@db.internal:6543/orders')).toBe('db.internal-6543-orders');
    expect(databaseLabel('postgres://app:secret@db.internal/orders')).toBe('db.internal-5432-orders');
    expect(databaseLabel('postgres://u@h/a%2F..%2Fb')).toBe('h-5432-a_.._b');
    expect(databaseLabel('postgres://u:secret@h/x')).not.toContain('secret');
  });
});

describe.skipIf(serverUrl === undefined)('switching databases in one DATA_DIR', () => {
  const name = `orders_adminfile_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  const dataDir = tempDir();
  afterAll(async () => {
    await dropDatabase(serverUrl!, name);
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('never overwrites the admin key of another database, and warns when the file is refused', async () => {
    const adminFile = join(dataDir, 'admin.key');
    const ok = async (url: string, key: string): Promise<number> => (await call(url, '/api/keys?limit=1', { key })).status;

    const embedded = await startApi({ dataDir, seedOrders: 10 });
    const embeddedKey = readFileSync(adminFile, 'utf8').trim();
    expect(await ok(embedded.api.url, embeddedKey)).toBe(200);
    await embedded.stop();

    const databaseUrl = await createDatabase(serverUrl!, name);
    const server = await startApi({ dataDir, seedOrders: 10, databaseUrl });
    expect(readFileSync(adminFile, 'utf8').trim()).toBe(embeddedKey);
    const ownFile = join(dataDir, `admin.${databaseLabel(databaseUrl)}.key`);
    const serverKey = readFileSync(ownFile, 'utf8').trim();
    expect(server.api.adminKey).toBe(serverKey);
    expect(await ok(server.api.url, serverKey)).toBe(200);
    expect(await ok(server.api.url, embeddedKey)).toBe(401);
    await server.stop();

    // Back on the embedded database: its key in admin.key still works.
    const again = await startApi({ dataDir, seedOrders: 10 });
    expect(await ok(again.api.url, embeddedKey)).toBe(200);
    expect(again.logs.join('\n')).not.toContain('admin.key holds a key this database refuses');
    await again.stop();

    // On the server database again, admin.key is refused there: the log points at its own file.
    const refused = await startApi({ dataDir, seedOrders: 10, databaseUrl });
    const warning = refused.logs.map((line) => JSON.parse(line) as { msg: string; thisDatabasesFile?: string }).find((line) => line.msg.startsWith('admin.key holds a key this database refuses'));
    expect(warning?.thisDatabasesFile).toBe(ownFile);
    expect(refused.logs.join('\n')).not.toContain(embeddedKey.slice(-12));
    await refused.stop();
  });
});
