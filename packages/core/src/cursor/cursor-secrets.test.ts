import { describe, expect, it } from 'vitest';
import { ConfigError, isKeysetError } from '../errors.ts';
import { createCursorCodec } from './cursor-codec.ts';
import { cursorSecrets } from './cursor-secrets.ts';
import { createPaginator } from '../pagination/paginator.ts';

describe('cursorSecrets', () => {
  it('reads comma-separated secrets, newest first', () => {
    expect(cursorSecrets(' new-secret-new-secret-new-secret-1 , old-secret-old-secret-old-secret-0,')).toEqual([
      'new-secret-new-secret-new-secret-1',
      'old-secret-old-secret-old-secret-0',
    ]);
  });

  it.each([undefined, '', ' , '])('fails fast naming the variable when the secret is %j outside development', (value) => {
    expect(() => cursorSecrets(value)).toThrow(ConfigError);
    expect(() => cursorSecrets(value, { name: 'ORDERS_CURSOR_SECRET' })).toThrow(
      /^ORDERS_CURSOR_SECRET is not set: .*openssl rand -base64 32.*\{ development: true \}/,
    );
  });

  it('signs with a random throwaway secret in development, a new one per call', () => {
    const [a] = cursorSecrets(undefined, { development: true });
    const [b] = cursorSecrets('', { development: true });
    // 32 random bytes after a label the codec reads to explain a refused cursor.
    expect(a).toMatch(/^keyset-throwaway-secret:[A-Za-z0-9_-]{43}$/);
    expect(a).not.toBe(b);
    expect(() => createCursorCodec({ secrets: [a!] })).not.toThrow();
  });

  it('still leaves a short secret to the codec, which refuses it', () => {
    expect(() => createCursorCodec({ secrets: cursorSecrets('short') })).toThrow(/at least 32 random bytes/);
  });
});

describe('a cursor refused under a development secret', () => {
  const options = (secrets: readonly string[]) => ({ endpoint: 'GET /orders', sort: [{ key: 'id', dir: 'asc' as const, type: 'int' as const, unique: true }], cursor: { secrets } });
  /** The detail of the problem `paginator` answers for `cursor`. */
  async function refusal(secrets: readonly string[], cursor: string): Promise<string> {
    try {
      await createPaginator(options(secrets)).plan(new URLSearchParams({ cursor }));
    } catch (error) {
      if (isKeysetError(error) && error.code === 'invalid_cursor') return error.detail ?? '';
      throw error;
    }
    throw new Error('the cursor was accepted');
  }
  async function cursorOf(secrets: readonly string[]): Promise<string> {
    const paginator = createPaginator(options(secrets));
    const { body } = await paginator.page(await paginator.plan(new URLSearchParams({ limit: '1' })), [{ id: 1 }, { id: 2 }], { url: new URL('http://localhost/orders') });
    return (body as { nextCursor: string }).nextCursor;
  }

  it('from another instance (its own throwaway secret): says that likely cause and names no secret', async () => {
    const ours = cursorSecrets(undefined, { development: true });
    const theirs = cursorSecrets(undefined, { development: true });
    const detail = await refusal(ours, await cursorOf(theirs));
    expect(detail).toMatch(/^The cursor was not signed by this server for this query\. Likely cause: .*development mode.*another instance.*same CURSOR_SECRET/);
    for (const secret of [...ours, ...theirs]) expect(detail).not.toContain(secret.split(':')[1]);
    // The cursor of this instance still works; other failures keep their own detail.
    await expect(createPaginator(options(ours)).plan(new URLSearchParams({ cursor: await cursorOf(ours) }))).resolves.toBeDefined();
    expect(await refusal(ours, 'not-a-cursor!')).toBe('The cursor is malformed or was not issued for this query; restart from the first page.');
  });

  it('with configured secrets the detail stays the plain one', async () => {
    const configured = ['a-configured-secret-of-forty-characters!'];
    expect(await refusal(configured, await cursorOf(cursorSecrets(undefined, { development: true })))).toBe(
      'The cursor is malformed or was not issued for this query; restart from the first page.',
    );
  });
});

describe('a secret list that holds an unset variable', () => {
  const env: Record<string, string | undefined> = { CURSOR_SECRET: undefined, EMPTY_SECRET: '' };
  const paginatorWith = (secrets: readonly (string | Uint8Array)[]) => () =>
    createPaginator({ endpoint: 'GET /orders', sort: [{ key: 'id', dir: 'asc', type: 'int', unique: true }], cursor: { secrets } });

  it('`[process.env.X!]` with X unset says the value is undefined and points to cursorSecrets()', () => {
    const attempt = paginatorWith([env.CURSOR_SECRET!]);
    expect(attempt).toThrow(ConfigError);
    expect(attempt).toThrow(/^cursor secrets\[0\] is undefined: an environment variable that is not set\? Read secrets with `cursorSecrets\(process\.env\.CURSOR_SECRET\)`/);
    expect(attempt).not.toThrow(/must be a string or a Uint8Array/);
  });

  it('names the position of the undefined or null one, and an empty one as empty', () => {
    const old = 'old-secret-old-secret-old-secret-0';
    expect(paginatorWith([old, env.CURSOR_SECRET!])).toThrow(/^cursor secrets\[1\] is undefined: .*cursorSecrets\(/);
    expect(paginatorWith([null as unknown as string])).toThrow(/^cursor secrets\[0\] is null: .*cursorSecrets\(/);
    expect(paginatorWith([env.EMPTY_SECRET!])).toThrow(/^cursor secrets\[0\] is empty: an environment variable set to nothing\? .*cursorSecrets\(/);
  });

  it('other wrong types still say what is accepted, and what came', () => {
    expect(paginatorWith([42 as unknown as string])).toThrow('cursor secrets[0] must be a string or a Uint8Array, got number');
    expect(paginatorWith([['a'] as unknown as string])).toThrow('cursor secrets[0] must be a string or a Uint8Array, got an array');
  });
});
