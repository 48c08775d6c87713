/**
 * The wire format, pinned: cursors issued by the codec before its one-path rewrite
 * (cursor-codec.frozen-cursors.json, never regenerated) still decode to the same
 * direction and position, or are refused for the same reason, and the encoder still
 * writes them byte for byte from the same position, secret and clock. A cursor a client
 * holds across a deploy keeps working. The fixture also holds version 1 cursors, a
 * forward-only draft no release issued: they are refused as malformed (`version`).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { nodeCrypto } from '../crypto/crypto.node.ts';
import type { CryptoProvider } from '../crypto/crypto-provider.ts';
import { webCrypto } from '../crypto/crypto.web.ts';
import { isKeysetError } from '../errors.ts';
import { createCursorCodec } from './cursor-codec.ts';
import { cursorFingerprint } from './cursor-fingerprint.ts';
import { defineSortSpec } from '../pagination/sort-spec.ts';
import type { CursorDirection, CursorPosition, SortKey } from '../pagination/types.ts';

interface Scope {
  endpoint: string;
  sort: SortKey[];
  filters: Record<string, unknown>;
  fingerprint: string;
}
interface Case {
  name: string;
  cursor: string;
  issue: { scope: string; secrets: string[]; clockMs: number; direction?: CursorDirection; position?: CursorPosition | null; version?: 1 };
  decode: { scope: string; secrets: string[]; clockMs: number; ttlSeconds?: number };
  expect: { direction: CursorDirection; position: CursorPosition | null } | { code: string; cause: string };
}
interface Fixture {
  secrets: Record<string, string | { hex: string }>;
  scopes: Record<string, Scope>;
  cases: Case[];
}

const fixture = JSON.parse(readFileSync(new URL('./cursor-codec.frozen-cursors.json', import.meta.url), 'utf8')) as Fixture;

function secret(name: string): string | Uint8Array {
  const s = fixture.secrets[name];
  if (s === undefined) throw new Error(`no secret ${name} in the fixture`);
  return typeof s === 'string' ? s : Uint8Array.from(s.hex.match(/../g) ?? [], (h) => Number.parseInt(h, 16));
}

function scope(name: string): Scope & { spec: ReturnType<typeof defineSortSpec> } {
  const s = fixture.scopes[name];
  if (s === undefined) throw new Error(`no scope ${name} in the fixture`);
  return { ...s, spec: defineSortSpec(s.sort) };
}

async function outcome(c: Case, crypto: CryptoProvider): Promise<unknown> {
  const { spec, fingerprint } = scope(c.decode.scope);
  const codec = createCursorCodec({
    secrets: c.decode.secrets.map(secret),
    clock: () => c.decode.clockMs,
    crypto,
    ...(c.decode.ttlSeconds === undefined ? {} : { ttlSeconds: c.decode.ttlSeconds }),
  });
  try {
    const decoded = await codec.decode(c.cursor, fingerprint, spec);
    return { direction: decoded.direction, position: decoded.position === null ? null : [...decoded.position] };
  } catch (err) {
    if (!isKeysetError(err)) throw err;
    return { code: err.code, cause: (err.cause as Error).message };
  }
}

describe('cursors issued before the one-path codec', () => {
  it('holds a case of every kind', () => {
    expect(fixture.cases.length).toBeGreaterThanOrEqual(40);
    expect(fixture.cases.some((c) => c.issue.version === 1)).toBe(true);
    expect(fixture.cases.some((c) => c.issue.direction === 'backward' && c.issue.position === null)).toBe(true);
    expect(fixture.cases.some((c) => 'cause' in c.expect && c.expect.cause === 'expired')).toBe(true);
  });

  it('fingerprints the same scopes to the same text', async () => {
    for (const [name, s] of Object.entries(fixture.scopes)) {
      expect(await cursorFingerprint({ endpoint: s.endpoint, sort: scope(name).spec, filters: s.filters }), name).toBe(s.fingerprint);
    }
  });

  for (const c of fixture.cases) {
    const expected = c.issue.version === 1 ? { code: 'invalid_cursor', cause: 'version' } : c.expect;
    it(`${c.issue.version === 1 ? 'refuses' : 'decodes as before'}: ${c.name}`, async () => {
      expect(await outcome(c, nodeCrypto)).toEqual(expected);
      expect(await outcome(c, webCrypto)).toEqual(expected);
    });

    if (c.issue.version !== 1) {
      it(`encodes byte for byte as before: ${c.name}`, async () => {
        const { spec, fingerprint } = scope(c.issue.scope);
        for (const crypto of [nodeCrypto, webCrypto]) {
          const codec = createCursorCodec({ secrets: c.issue.secrets.map(secret), clock: () => c.issue.clockMs, crypto });
          expect(await codec.encode(c.issue.position ?? null, fingerprint, spec, c.issue.direction ?? 'forward')).toBe(c.cursor);
        }
      });
    }
  }
});
