/**
 * The secret-scanning alert endpoint (GitHub's secret scanning partner program): a
 * Fetch-style `(Request) => Response` handler that verifies the alert's ECDSA P-256
 * signature, refuses replays, looks each distinct reported token up by digest through the
 * keyring, records the leak on each match's key record (`leakedAt`, `leakUrl`) and revokes
 * it (policy `revoke`) before it answers. Its work is bounded before anything is believed:
 * the headers are checked before the body is read, the body is capped, at most
 * `maxConcurrentAlerts` alerts are handled at once, an alert holds at most `maxTokens`
 * tokens, and tokens are looked up `LOOKUP_CONCURRENCY` at a time. One handler works under every
 * adapter, since Hono, Next.js, Bun, Deno and Workers speak `Request`, and Express and
 * Fastify apps mount it through a Fetch bridge.
 *
 * The answer lists each token as sent (`token_raw`): that is the partner protocol, and the
 * one place keyset writes key text, back to the party that sent it. Logs (one line per
 * alert), problems and the `onLeak` event carry only the last four characters.
 * @module
 */
import { systemClock, type Clock } from '../clock.ts';
import { ConfigError, isKeysetError, KeysetError, PROBLEM_CONTENT_TYPE, toProblem } from '../errors.ts';
import type { CryptoProvider } from '../crypto/crypto-provider.ts';
import { defaultCrypto } from '../internal/default-crypto.ts';
import { toHex } from '../internal/hex.ts';
import { assertKnownOptions, type KnownOptions } from '../internal/check-options.ts';
import { isWellFormedKey } from '../keys/is-well-formed-key.ts';
import type { KeyAdmin } from '../admin/key-admin.ts';
import type { Keyring } from '../auth/keyring.ts';
import { leakUrlOf } from '../admin/leak-url.ts';
import { redactKey } from '../redaction/redact-key.ts';
import { decodeBase64 } from './base64.ts';
import { derToRawSignature } from './der-signature.ts';
import { hasDuplicateMember } from './duplicate-members.ts';
import { createPublicKeyCache, type PublicKeySource } from './github-public-keys.ts';

/** What happens to a live key GitHub found. */
export type LeakPolicy = 'revoke' | 'mark';

/** One leaked key, as `onLeak` sees it: never its text. */
export interface LeakEvent {
  /** The key's identity id. */
  keyId: string;
  /** The key's last four characters. */
  last4: string;
  /** `'revoked'`: the handler revoked it (policy `revoke`); `'marked'`: left live (policy `mark`). */
  action: 'revoked' | 'marked';
  /** The token type GitHub reported (your registered type name). */
  type: string;
  /** GitHub's `source` (e.g. `'content'`, `'commit'`), when it said. */
  source?: string;
  /**
   * Where GitHub found it (a commit, issue or gist URL) as the key record keeps it: an
   * http(s) URL cleaned of key text, or `null` when GitHub gave none or one that is not
   * recorded (see `KeyRecord.leakUrl`). GitHub's own text is not passed on: it can hold
   * the very key it reports.
   */
  leakUrl: string | null;
}

/** Options of `createLeakAlertHandler`. */
export interface LeakAlertHandlerOptions {
  /** The keyring whose keys GitHub reports. */
  keyring: Keyring;
  /**
   * `createKeyAdmin(keyring)`: records each leak on the key's record and revokes through the
   * keyring's change listeners (the revocation bus). The keyring's store must have `recordLeak`.
   */
  admin: KeyAdmin;
  /**
   * GitHub's signing keys: a URL answering `{ public_keys: [...] }`, or `{ fetch() }`
   * returning the list (tests, a proxy, a pinned copy). Required, so the trust anchor is
   * visible where the handler is made: GitHub's is `GITHUB_SECRET_SCANNING_KEYS_URL`.
   */
  publicKeys: PublicKeySource;
  /**
   * `revoke`: end the key now; the answer waits for the revocation (and the bus's
   * acknowledgements). `mark`: leave it live and call `onLeak`.
   * @default 'revoke'
   */
  policy?: LeakPolicy;
  /** Called for each live key found, after the leak was recorded and the policy ran, before the answer. */
  onLeak?: (event: LeakEvent) => void | Promise<void>;
  /**
   * Largest body read; more is refused with 400 `invalid_request` before parsing. The body
   * is read before its signature can be checked, so this is what anyone can make the
   * handler hold per alert. 256 KiB carries `maxTokens` entries of 1 KiB each (a token, its
   * type and a GitHub URL take about 300 bytes).
   * @default 262144
   */
  maxBodyBytes?: number;
  /**
   * Most tokens (array entries, repeats included) one alert may hold; more is refused
   * with 400 `invalid_request` (`max_tokens`) before any lookup.
   * @default 256
   */
  maxTokens?: number;
  /**
   * Most alerts read and processed at once on this handler; one more is answered 503
   * `unavailable` with `Retry-After: 1`, its body unread. Bounds what unsigned bodies
   * can hold in memory (`maxConcurrentAlerts × maxBodyBytes`) and the store work alerts
   * cause at once.
   * @default 4
   */
  maxConcurrentAlerts?: number;
  /**
   * How long an accepted body's digest is remembered, to refuse the same alert again.
   * @default 3600
   */
  replayWindowSeconds?: number;
  /**
   * Most digests remembered; the oldest is forgotten first.
   * @default 10000
   */
  maxRememberedAlerts?: number;
  /**
   * Least time between two key refreshes caused by unknown key ids.
   * @default 60
   */
  minKeyRefreshSeconds?: number;
  /**
   * Receives one line per processed alert, whatever it holds: `warn` when it reported a
   * live key, else `info`, with `{ tokens, distinct, leaked: [{ keyId, last4 }],
   * alreadyEnded, falsePositives, policy }` (pino fits). Never key text beyond the last four
   * characters.
   */
  logger?: { info?(fields: Record<string, unknown>, message: string): void; warn?(fields: Record<string, unknown>, message: string): void };
  /** @default Date.now */
  clock?: Clock;
  /** Digests the bodies it remembers against replays. @default the runtime's provider (`node:crypto` on Node, Web Crypto elsewhere) */
  crypto?: CryptoProvider;
}

/** The endpoint: a Fetch-style handler. */
export type LeakAlertHandler = (request: Request) => Promise<Response>;

/** Every name `createLeakAlertHandler`'s options know. */
const OPTIONS = {
  keyring: true,
  admin: true,
  publicKeys: true,
  policy: true,
  onLeak: true,
  maxBodyBytes: true,
  maxTokens: true,
  maxConcurrentAlerts: true,
  replayWindowSeconds: true,
  maxRememberedAlerts: true,
  minKeyRefreshSeconds: true,
  logger: true,
  clock: true,
  crypto: true,
} as const satisfies KnownOptions<LeakAlertHandlerOptions>;

interface Alert {
  token: string;
  type: string;
  url?: string;
  source?: string;
}

/** What looking one distinct token up found. */
type Finding = { label: 'false_positive' } | { label: 'true_positive'; leaked?: { keyId: string; last4: string } };

/**
 * Tokens looked up at once within one alert: a few, so an alert of `maxTokens` live keys
 * (each a lookup, a leak record and a revocation awaiting the bus) neither runs one after
 * the other nor takes every connection of the database pool from other requests.
 */
const LOOKUP_CONCURRENCY = 4;

const refuse = (field: string, detail: string, extensions: Record<string, unknown> = {}): KeysetError =>
  new KeysetError('invalid_request', { detail, extensions: { field, ...extensions } });

function parseAlerts(text: string, maxTokens: number): Alert[] {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw refuse('body', 'The alert body is not JSON.');
  }
  if (!Array.isArray(value)) throw refuse('body', 'The alert body must be a JSON array.');
  if (value.length > maxTokens) throw refuse('body', `The alert holds more than ${maxTokens} tokens.`, { max_tokens: maxTokens });
  if (hasDuplicateMember(text)) throw refuse('body', 'The alert body names a member twice in one object.');
  return value.map((item: unknown) => {
    const { token, type, url, source } = (typeof item === 'object' && item !== null ? item : {}) as Record<string, unknown>;
    if (typeof token !== 'string' || typeof type !== 'string') throw refuse('body', 'Each alert needs a string token and type.');
    return { token, type, ...(typeof url === 'string' ? { url } : {}), ...(typeof source === 'string' ? { source } : {}) };
  });
}

/**
 * The refusal of a body over `max` bytes. The rest of it is never read, so the answer asks
 * for the connection to be closed (RFC 9112 §9.6): a keep-alive client would otherwise send
 * its next request on a connection whose unread bytes the server is discarding or has
 * dropped, and see it hang up.
 */
const tooLarge = (max: number): KeysetError =>
  new KeysetError('invalid_request', { detail: `The alert body is larger than ${max} bytes.`, extensions: { field: 'body' }, headers: { connection: 'close' } });

async function readBody(request: Request, max: number): Promise<Uint8Array<ArrayBuffer>> {
  const declared = Number(request.headers.get('content-length') ?? '0');
  if (declared > max) throw tooLarge(max);
  const reader = request.body?.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  while (reader !== undefined) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.length;
    if (size > max) {
      await reader.cancel();
      throw tooLarge(max);
    }
    chunks.push(value);
  }
  const body = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) body.set(chunk, (at += chunk.length) - chunk.length);
  return body;
}

/** `work` over every item, at most `limit` at a time; results in the items' order. */
async function mapBounded<T, R>(items: readonly T[], limit: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      results[i] = await work(items[i] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

/**
 * Creates the secret-scanning alert endpoint for `keyring` (GitHub's partner program).
 *
 * @example
 * ```ts
 * const leakAlerts = createLeakAlertHandler({ keyring, admin: createKeyAdmin(keyring), publicKeys: 'https://api.github.com/meta/public_keys/secret_scanning' });
 * hono.post('/secret-scanning/github', (c) => leakAlerts(c.req.raw));
 * ```
 */
export function createLeakAlertHandler(options: LeakAlertHandlerOptions): LeakAlertHandler {
  assertKnownOptions('createLeakAlertHandler', options, OPTIONS);
  const {
    keyring,
    admin,
    publicKeys,
    policy = 'revoke',
    onLeak,
    maxBodyBytes = 262_144,
    maxTokens = 256,
    maxConcurrentAlerts = 4,
    replayWindowSeconds = 3600,
    maxRememberedAlerts = 10_000,
    minKeyRefreshSeconds = 60,
    logger,
    clock = systemClock,
    crypto: provider = defaultCrypto,
  } = options;
  if (typeof keyring?.verify !== 'function' || typeof admin?.revoke !== 'function' || typeof admin.recordLeak !== 'function') {
    throw new ConfigError('createLeakAlertHandler needs keyring (createKeyring) and admin (createKeyAdmin(keyring))');
  }
  // Checked here, not at the first alert: an alert that cannot be recorded would be a 500.
  if (typeof keyring.parts?.().config.store.recordLeak !== 'function') {
    throw new ConfigError("createLeakAlertHandler needs a key store that records leaks (KeyStore.recordLeak): the memory and PostgreSQL stores do");
  }
  if (policy !== 'revoke' && policy !== 'mark') throw new ConfigError(`createLeakAlertHandler: policy must be 'revoke' or 'mark', got ${JSON.stringify(String(policy))}`);
  for (const [name, value] of Object.entries({ maxBodyBytes, replayWindowSeconds, maxRememberedAlerts, minKeyRefreshSeconds })) {
    if (!Number.isSafeInteger(value) || value < 0) throw new ConfigError(`createLeakAlertHandler: ${name} must be a non-negative integer`);
  }
  for (const [name, value] of Object.entries({ maxTokens, maxConcurrentAlerts })) {
    if (!Number.isSafeInteger(value) || value < 1) throw new ConfigError(`createLeakAlertHandler: ${name} must be a positive integer`);
  }
  if (typeof provider?.sha256 !== 'function') throw new ConfigError('createLeakAlertHandler: crypto must be a CryptoProvider (sha256)');
  const keys = createPublicKeyCache(publicKeys, clock, minKeyRefreshSeconds * 1000);
  /** Digest of each accepted body → when it may be accepted again; insertion order is age order. */
  const seen = new Map<string, number>();
  /** Alerts being read or processed now (at most `maxConcurrentAlerts`). */
  let active = 0;

  function remember(digest: string): boolean {
    const now = clock();
    for (const [old, until] of seen) {
      if (until > now && seen.size < maxRememberedAlerts) break;
      seen.delete(old);
    }
    if ((seen.get(digest) ?? 0) > now) return false;
    seen.set(digest, now + replayWindowSeconds * 1000);
    return true;
  }

  /** Looks one distinct token up and, when it names a live key, records the leak and applies the policy. */
  async function lookUp(alert: Alert): Promise<Finding> {
    if (!isWellFormedKey(alert.token, keyring.prefixes)) return { label: 'false_positive' };
    let keyId: string;
    try {
      keyId = (await keyring.verify(alert.token)).id;
    } catch (error) {
      const reason = (error as { reason?: unknown }).reason;
      if (reason === 'revoked' || reason === 'expired') return { label: 'true_positive' }; // ours, already dead
      if (isKeysetError(error) && error.code === 'invalid_api_key') return { label: 'false_positive' };
      throw error; // the store is down: 503, GitHub retries
    }
    const leakUrl = leakUrlOf(alert.url, alert.token);
    // Recorded before the revocation: if that fails (503), GitHub's retry still finds the
    // key live, records again (the first report is kept) and revokes. A key already dead
    // when reported is not recorded: verification names no key it refuses.
    try {
      await admin.recordLeak(keyId, { url: leakUrl });
      if (policy === 'revoke') await admin.revoke(keyId);
    } catch (error) {
      // Deleted since it verified: ours, and dead; the other tokens of the alert go on.
      if (isKeysetError(error) && error.code === 'not_found') return { label: 'true_positive' };
      throw error;
    }
    const last4 = alert.token.slice(-4);
    const event: LeakEvent = { keyId, last4, action: policy === 'revoke' ? 'revoked' : 'marked', type: alert.type, leakUrl };
    if (alert.source !== undefined) event.source = alert.source;
    await onLeak?.(event);
    return { label: 'true_positive', leaked: { keyId, last4 } };
  }

  async function handle(request: Request): Promise<Response> {
    // Everything that needs no body first: a forged alert costs no read when its headers
    // already fail, and none of a body's bytes are believed before the signature holds.
    const keyId = request.headers.get('github-public-key-identifier');
    const signature = decodeBase64(request.headers.get('github-public-key-signature') ?? '');
    const raw = signature === undefined ? undefined : derToRawSignature(signature, 32);
    if (raw === undefined) throw refuse('github-public-key-signature', 'The alert signature is missing or not a base64 DER ECDSA signature.');
    if (keyId === null || keyId === '' || keyId.length > 256) throw refuse('github-public-key-identifier', 'The alert names no signing key.');
    const key = await keys.get(keyId);
    if (key === undefined) throw refuse('github-public-key-identifier', 'The alert names a signing key that is not published.');
    const body = await readBody(request, maxBodyBytes);
    // ECDSA is not part of the CryptoProvider seam (it carries digests and HMACs); Web
    // Crypto's verify is the Web-standard API every runtime keyset supports has.
    if (!(await crypto.subtle.verify({ name: 'ECDSA', hash: 'SHA-256' }, key, raw, body))) {
      throw refuse('github-public-key-signature', 'The alert signature does not match its body.');
    }
    let text: string;
    try {
      text = new TextDecoder('utf-8', { fatal: true }).decode(body);
    } catch {
      throw refuse('body', 'The alert body is not UTF-8.');
    }
    const alerts = parseAlerts(text, maxTokens);
    // Strict UTF-8 makes the text stand for exactly these bytes: its digest is the body's.
    const digest = toHex(await provider.sha256(text));
    if (!remember(digest)) throw refuse('body', 'This alert was already processed.');
    // Each distinct token once (the first entry's URL and source stand for its repeats):
    // 2,000 copies of one key are one lookup, one record, one revocation and one onLeak.
    const distinct = new Map<string, Alert>();
    for (const alert of alerts) if (!distinct.has(alert.token)) distinct.set(alert.token, alert);
    let findings: Finding[];
    try {
      findings = await mapBounded([...distinct.values()], LOOKUP_CONCURRENCY, lookUp);
    } catch (error) {
      seen.delete(digest); // not processed: GitHub's retry must be accepted
      throw error;
    }
    const byToken = new Map([...distinct.keys()].map((token, i) => [token, findings[i] as Finding]));
    const leaked = findings.flatMap((f) => (f.label === 'true_positive' && f.leaked !== undefined ? [f.leaked] : []));
    const fields = {
      tokens: alerts.length,
      distinct: distinct.size,
      leaked,
      alreadyEnded: findings.filter((f) => f.label === 'true_positive' && f.leaked === undefined).length,
      falsePositives: findings.filter((f) => f.label === 'false_positive').length,
      policy,
    };
    if (leaked.length > 0) logger?.warn?.(fields, 'secret scanning alert processed');
    else logger?.info?.(fields, 'secret scanning alert processed');
    // The partner protocol answers each token as sent, so GitHub can match the labels.
    const answer = alerts.map((a) => ({ token_raw: a.token, token_type: a.type, label: (byToken.get(a.token) as Finding).label }));
    return new Response(JSON.stringify(answer), { status: 200, headers: { 'content-type': 'application/json' } });
  }

  return async function leakAlertHandler(request: Request): Promise<Response> {
    try {
      if (active >= maxConcurrentAlerts) {
        throw new KeysetError('unavailable', { detail: 'Too many alerts at once; send it again in 1 s.', headers: { 'retry-after': '1' } });
      }
      active++;
      try {
        return await handle(request);
      } finally {
        active--;
      }
    } catch (error) {
      const problem = toProblem(error);
      return new Response(JSON.stringify(problem.body), { status: problem.status, headers: { ...problem.headers, 'content-type': PROBLEM_CONTENT_TYPE } });
    }
  };
}
