/**
 * The LISTEN/NOTIFY revocation bus between keyrings on a real PostgreSQL: a key revoked on
 * one instance is gone from the other's cache before `revoke()` resolves, and a listener
 * that never answers costs at most `ackTimeoutMs` plus a warning. Propagation is measured
 * and printed, never asserted against a wall-clock budget.
 */
import { createKeyAdmin, createKeyring, isKeysetError } from '@keyset/core';
import type { Keyring } from '@keyset/core';
import type { RevocationEvent } from '@keyset/core/adapter';
import { postgresUrl, uniqueSchema } from '@keyset/test-support';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { migrate } from './migrate.ts';
import { createPostgresKeyStore } from './postgres-key-store.ts';
import { createPostgresRevocationBus, type NotificationListener, type PostgresRevocationBus } from './revocation-bus.ts';

const url = await postgresUrl();
const schema = uniqueSchema('keyset_bus');

async function reason(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
    return 'accepted';
  } catch (error) {
    return isKeysetError(error) ? ((error as { reason?: string }).reason ?? error.code) : 'other';
  }
}

describe.skipIf(url === undefined)('createPostgresRevocationBus (real PostgreSQL LISTEN/NOTIFY)', () => {
  let pool: pg.Pool;
  const listeners: pg.Client[] = [];
  const cleanup: (() => Promise<void>)[] = [];
  let channelSeq = 0;
  const channel = (): string => `${schema}_${++channelSeq}`.slice(0, 40);

  beforeAll(async () => {
    pool = new pg.Pool({ connectionString: url, max: 6 });
    await migrate(pool, { schema });
  });
  afterEach(async () => {
    for (const fn of cleanup.splice(0).reverse()) await fn();
    await Promise.all(listeners.splice(0).map((c) => c.end().catch(() => undefined)));
  });
  afterAll(async () => {
    await pool?.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await pool?.end();
  });

  async function connectListener(): Promise<pg.Client> {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    listeners.push(client);
    return client;
  }

  /** An instance: a keyring with a 30 s cache over the shared tables, and its bus. */
  async function instance(ch: string, warnings: Record<string, unknown>[] = []): Promise<{ keyring: Keyring; bus: PostgresRevocationBus }> {
    const keyring = createKeyring({ store: createPostgresKeyStore({ client: pool, schema }), prefix: 'acme_test', lastUsed: false });
    const bus = createPostgresRevocationBus({ client: pool, listener: await connectListener(), keyring, channel: ch, logger: { warn: (f) => void warnings.push(f) } });
    await bus.ready;
    cleanup.push(async () => {
      await bus.close();
      await keyring.close();
    });
    return { keyring, bus };
  }

  it('evicts a key revoked on instance A from instance B before A’s revoke() resolves (measured)', async () => {
    const ch = channel();
    const warnings: Record<string, unknown>[] = [];
    const a = await instance(ch, warnings);
    const b = await instance(ch, warnings);
    // Control: an instance without a bus keeps its cached answer until the TTL.
    const control = createKeyring({ store: createPostgresKeyStore({ client: pool, schema }), prefix: 'acme_test', lastUsed: false });
    cleanup.push(() => control.close());
    const samples: number[] = [];
    for (let i = 0; i < 5; i++) {
      const { key, record } = await createKeyAdmin(a.keyring).issue({ name: `svc ${i}`, scopes: [] });
      expect(await reason(b.keyring.verify(key))).toBe('accepted'); // cached on B now
      expect(await reason(control.verify(key))).toBe('accepted');
      const started = performance.now();
      await createKeyAdmin(a.keyring).revoke(record.id);
      samples.push(performance.now() - started);
      expect(await reason(b.keyring.verify(key))).toBe('revoked');
      expect(await reason(control.verify(key))).toBe('accepted'); // stale without a bus
    }
    expect(warnings).toEqual([]);
    samples.sort((x, y) => x - y);
    console.info(`[measured] PostgreSQL LISTEN/NOTIFY revoke() incl. the UPDATE, 2 instances: median ${samples[2]!.toFixed(1)} ms, max ${samples[4]!.toFixed(1)} ms`);
  });

  it('drops every cached key when its listening session is lost, listens again through connectListener, and drops them once more', async () => {
    const ch = channel();
    const messages: string[] = [];
    const keyring = createKeyring({ store: createPostgresKeyStore({ client: pool, schema }), prefix: 'acme_test', lastUsed: false });
    const admin = createKeyAdmin(keyring);
    let flushes = 0;
    let onFlush: (() => void) | undefined;
    const observed = {
      onChange: keyring.onChange.bind(keyring),
      invalidate: (id: string) => keyring.invalidate(id),
      invalidateAll(): void {
        flushes++;
        keyring.invalidateAll();
        onFlush?.();
      },
    };
    const first = await connectListener();
    first.on('error', () => undefined);
    const bus = createPostgresRevocationBus({ client: pool, listener: first, connectListener, keyring: observed, channel: ch, logger: { warn: (_f, m) => void messages.push(m) } });
    await bus.ready;
    const elsewhere = createKeyring({ store: createPostgresKeyStore({ client: pool, schema }), prefix: 'acme_test', lastUsed: false });
    cleanup.push(async () => {
      await bus.close();
      await keyring.close();
      await elsewhere.close();
    });
    const { key, record } = await admin.issue({ name: 'cached', scopes: [] });
    expect(await reason(keyring.verify(key))).toBe('accepted'); // cached for 30 s
    // Revoked by an instance whose event this one never hears (its session was down at that moment).
    await createKeyAdmin(elsewhere).revoke(record.id);
    expect(await reason(keyring.verify(key))).toBe('accepted'); // the stale cache, before the session is lost
    const listeningAgain = new Promise<void>((resolve) => {
      onFlush = () => flushes >= 2 && resolve();
    });
    const { rows } = await first.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
    await pool.query('SELECT pg_terminate_backend($1)', [rows[0]!.pid]);
    await listeningAgain;
    expect(await reason(keyring.verify(key))).toBe('revoked');
    expect(messages).toEqual([expect.stringContaining('lost its listening connection: dropped cached keys'), expect.stringContaining('listens again')]);
    // The new session listens and is counted: another instance's revocation reaches this one before revoke() resolves.
    const other = await instance(ch);
    const { key: second, record: secondRecord } = await admin.issue({ name: 'second', scopes: [] });
    expect(await reason(keyring.verify(second))).toBe('accepted');
    await createKeyAdmin(other.keyring).revoke(secondRecord.id);
    expect(await reason(keyring.verify(second))).toBe('revoked');
  });

  it('carries updates (narrowed allowlist) and rotations the same way', async () => {
    const ch = channel();
    const a = await instance(ch);
    const b = await instance(ch);
    const { key, record } = await createKeyAdmin(a.keyring).issue({ name: 'svc', scopes: [] });
    expect((await b.keyring.verify(key)).ipAllowlist).toBeNull();
    await createKeyAdmin(a.keyring).update(record.id, { ipAllowlist: ['203.0.113.0/24'] });
    expect((await b.keyring.verify(key)).ipAllowlist).toEqual(['203.0.113.0/24']);
    await createKeyAdmin(a.keyring).rotate(record.id, { overlapSeconds: 0 });
    expect(await reason(b.keyring.verify(key))).toBe('expired');
  });

  it('waits at most ackTimeoutMs for a listening instance that never confirms, then warns', async () => {
    const ch = channel();
    const warnings: Record<string, unknown>[] = [];
    const keyring = createKeyring({ store: createPostgresKeyStore({ client: pool, schema }), prefix: 'acme_test', lastUsed: false });
    const admin = createKeyAdmin(keyring);
    const bus = createPostgresRevocationBus({ client: pool, listener: await connectListener(), keyring, channel: ch, ackTimeoutMs: 150, logger: { warn: (f) => void warnings.push(f) } });
    await bus.ready;
    cleanup.push(async () => {
      await bus.close();
      await keyring.close();
    });
    // A session that counts as an instance (same application_name, LISTENing) but never acknowledges.
    const mute = await connectListener();
    await mute.query(`SELECT set_config('application_name', $1, false)`, [`keyset-bus:${ch}`]);
    await mute.query(`LISTEN "${ch}"`);
    const { record } = await admin.issue({ name: 'svc', scopes: [] });
    await admin.revoke(record.id);
    expect(warnings).toEqual([{ type: 'revoked', id: record.id, instances: 1, unacknowledged: 1 }]);
  });

  it('ignores junk on the channel and honours a well-formed event from another instance', async () => {
    const ch = channel();
    const { keyring } = await instance(ch);
    const { key, record } = await createKeyAdmin(keyring).issue({ name: 'svc', scopes: [] });
    expect(await reason(keyring.verify(key))).toBe('accepted');
    // Revoke in the table behind the keyring's back: only an eviction makes it visible.
    await pool.query(`UPDATE "${schema}".keyset_identities SET revoked_at = now() WHERE id = $1`, [record.id]);
    for (const junk of ['', 'not json', '{"v":2}', JSON.stringify({ v: 1, origin: 'x', type: 'deleted', id: record.id })]) {
      await pool.query('SELECT pg_notify($1, $2)', [ch, junk]);
    }
    const other = createPostgresRevocationBus({ client: pool, listener: await connectListener(), keyring: { onChange: () => () => undefined, invalidate: () => undefined }, channel: ch, publishOnChange: false });
    await other.ready;
    cleanup.push(() => other.close());
    // Notifications arrive in order: once an event about another identity is acknowledged,
    // the junk before it has been read, and it evicted nothing.
    await other.publish({ type: 'revoked', id: 'key_someone_else' });
    expect(await reason(keyring.verify(key))).toBe('accepted');
    const samples: number[] = [];
    for (let i = 0; i < 5; i++) {
      const started = performance.now();
      await other.publish({ type: 'updated', id: 'key_someone_else' });
      samples.push(performance.now() - started);
    }
    samples.sort((x, y) => x - y);
    console.info(`[measured] PostgreSQL NOTIFY → eviction → acknowledgement, 1 other instance: median ${samples[2]!.toFixed(1)} ms, max ${samples[4]!.toFixed(1)} ms`);
    const event: RevocationEvent = { type: 'revoked', id: record.id };
    await other.publish(event); // resolves once our instance acknowledged its eviction
    expect(await reason(keyring.verify(key))).toBe('revoked');
  });

  it('refuses bad options with a ConfigError', async () => {
    const listener = (await connectListener()) as unknown as NotificationListener;
    const keyring = { onChange: () => () => undefined, invalidate: () => undefined };
    expect(() => createPostgresRevocationBus({ client: pool, listener, keyring, channel: 'Bad-Channel' })).toThrow(/channel must match/);
    expect(() => createPostgresRevocationBus({ client: pool, listener: pool as never, keyring })).toThrow(/listener/);
    expect(() => createPostgresRevocationBus({ client: pool, listener, keyring, ackTimeoutMs: -1 })).toThrow(/ackTimeoutMs/);
    expect(() => createPostgresRevocationBus({ client: pool, listener, keyring, timeoutMs: 0 })).toThrow(/timeoutMs/);
  });
});
