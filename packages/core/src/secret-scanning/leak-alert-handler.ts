/**
 * The secret-scanning alert endpoint (GitHub's partner program, docs/security.md): a
 * Fetch-style `(Request) => Response` handler that verifies the alert's ECDSA P-256
 * signature, refuses replays, looks each reported token up by digest through the keyring,
 * records the leak on each match's key record (`leakedAt`, `leakUrl`) and revokes it (policy
 * `revoke`) before it answers. One handler works under every
 * adapter, since Hono, Next.js, Bun, Deno and Workers speak `Request`, and Express and
 * Fastify apps mount it through their Fetch bridge (docs/security.md).
 *
 * The answer lists each token as sent (`token_raw`): that is the partner protocol, and the
 * one place keyset writes key text, back to the party that sent it. Logs, problems and the
 * `onLeak` event carry only the last four characters.
 * @module
 */
import { systemClock, type Clock } from '../clock.ts';
import { ConfigError, isKeysetError, KeysetError, PROBLEM_CONTENT_TYPE, toProblem } from '../errors.ts';
import { toHex } from '../internal/hex.ts';
import { assertKnownOptions, type KnownOptions } from '../internal/check-options.ts';
import { keyringParts } from '../keys/internal/keyring-parts.ts';
import { isWellFormedKey } from '../keys/is-well-formed-key.ts';
import type { KeyAdmin } from '../keys/key-admin.ts';
import type { Keyring } from '../keys/keyring.ts';
import { leakUrlOf } from '../keys/leak-url.ts';
import { redactKey } from '../keys/redact-key.ts';
import { decodeBase64 } from './base64.ts';
import { derToRawSignature } from './der-signature.ts';
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
   * Largest body read; more is refused with 400 `invalid_request` before parsing.
   * @default 1048576
   */
  maxBodyBytes?: number;
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
  /** Receives one `info` line per processed alert (counts, last four characters only; pino fits). */
  logger?: { info?(fields: Record<string, unknown>, message: string): void };
  /** @default Date.now */
  clock?: Clock;
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
  replayWindowSeconds: true,
  maxRememberedAlerts: true,
  minKeyRefreshSeconds: true,
  logger: true,
  clock: true,
} as const satisfies KnownOptions<LeakAlertHandlerOptions>;

interface Alert {
  token: string;
  type: string;
  url?: string;
  source?: string;
}

const refuse = (field: string, detail: string): KeysetError => new KeysetError('invalid_request', { detail, extensions: { field } });

function parseAlerts(text: string): Alert[] {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw refuse('body', 'The alert body is not JSON.');
  }
  if (!Array.isArray(value)) throw refuse('body', 'The alert body must be a JSON array.');
  return value.map((item: unknown) => {
    const { token, type, url, source } = (typeof item === 'object' && item !== null ? item : {}) as Record<string, unknown>;
    if (typeof token !== 'string' || typeof type !== 'string') throw refuse('body', 'Each alert needs a string token and type.');
    return { token, type, ...(typeof url === 'string' ? { url } : {}), ...(typeof source === 'string' ? { source } : {}) };
  });
}

async function readBody(request: Request, max: number): Promise<Uint8Array<ArrayBuffer>> {
  const declared = Number(request.headers.get('content-length') ?? '0');
  if (declared > max) throw refuse('body', `The alert body is larger than ${max} bytes.`);
  const reader = request.body?.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  while (reader !== undefined) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.length;
    if (size > max) {
      await reader.cancel();
      throw refuse('body', `The alert body is larger than ${max} bytes.`);
    }
    chunks.push(value);
  }
  const body = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) body.set(chunk, (at += chunk.length) - chunk.length);
  return body;
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
    maxBodyBytes = 1_048_576,
    replayWindowSeconds = 3600,
    maxRememberedAlerts = 10_000,
    minKeyRefreshSeconds = 60,
    logger,
    clock = systemClock,
  } = options;
  if (typeof keyring?.verify !== 'function' || typeof admin?.revoke !== 'function' || typeof admin.recordLeak !== 'function') {
    throw new ConfigError('createLeakAlertHandler needs keyring (createKeyring) and admin (createKeyAdmin(keyring))');
  }
  // Checked here, not at the first alert: an alert that cannot be recorded would be a 500.
  if (typeof keyringParts(keyring)?.config.store.recordLeak !== 'function') {
    throw new ConfigError("createLeakAlertHandler needs a key store that records leaks (KeyStore.recordLeak): the memory and PostgreSQL stores do");
  }
  if (policy !== 'revoke' && policy !== 'mark') throw new ConfigError(`createLeakAlertHandler: policy must be 'revoke' or 'mark', got ${JSON.stringify(String(policy))}`);
  for (const [name, value] of Object.entries({ maxBodyBytes, replayWindowSeconds, maxRememberedAlerts, minKeyRefreshSeconds })) {
    if (!Number.isSafeInteger(value) || value < 0) throw new ConfigError(`createLeakAlertHandler: ${name} must be a non-negative integer`);
  }
  const keys = createPublicKeyCache(publicKeys, clock, minKeyRefreshSeconds * 1000);
  /** Digest of each accepted body → when it may be accepted again; insertion order is age order. */
  const seen = new Map<string, number>();

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

  async function label(alert: Alert): Promise<'true_positive' | 'false_positive'> {
    if (!isWellFormedKey(alert.token, keyring.prefixes)) return 'false_positive';
    let keyId: string;
    try {
      keyId = (await keyring.verify(alert.token)).id;
    } catch (error) {
      const reason = (error as { reason?: unknown }).reason;
      if (reason === 'revoked' || reason === 'expired') return 'true_positive'; // ours, already dead
      if (isKeysetError(error) && error.code === 'invalid_api_key') return 'false_positive';
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
      if (isKeysetError(error) && error.code === 'not_found') return 'true_positive';
      throw error;
    }
    const event: LeakEvent = { keyId, last4: alert.token.slice(-4), action: policy === 'revoke' ? 'revoked' : 'marked', type: alert.type, leakUrl };
    if (alert.source !== undefined) event.source = alert.source;
    await onLeak?.(event);
    return 'true_positive';
  }

  async function handle(request: Request): Promise<Response> {
    const body = await readBody(request, maxBodyBytes);
    const keyId = request.headers.get('github-public-key-identifier');
    const signature = decodeBase64(request.headers.get('github-public-key-signature') ?? '');
    const raw = signature === undefined ? undefined : derToRawSignature(signature, 32);
    if (raw === undefined) throw refuse('github-public-key-signature', 'The alert signature is missing or not a base64 DER ECDSA signature.');
    if (keyId === null || keyId === '' || keyId.length > 256) throw refuse('github-public-key-identifier', 'The alert names no signing key.');
    const key = await keys.get(keyId);
    if (key === undefined) throw refuse('github-public-key-identifier', 'The alert names a signing key that is not published.');
    if (!(await crypto.subtle.verify({ name: 'ECDSA', hash: 'SHA-256' }, key, raw, body))) {
      throw refuse('github-public-key-signature', 'The alert signature does not match its body.');
    }
    const alerts = parseAlerts(new TextDecoder('utf-8', { fatal: false }).decode(body));
    const digest = toHex(new Uint8Array(await crypto.subtle.digest('SHA-256', body)));
    if (!remember(digest)) throw refuse('body', 'This alert was already processed.');
    let labels: ('true_positive' | 'false_positive')[];
    try {
      labels = await Promise.all(alerts.map(label));
    } catch (error) {
      seen.delete(digest); // not processed: GitHub's retry must be accepted
      throw error;
    }
    const found = alerts.filter((_, i) => labels[i] === 'true_positive').map((a) => redactKey(a.token));
    logger?.info?.({ alerts: alerts.length, leaked: found, policy }, 'secret scanning alert processed');
    // The partner protocol answers each token as sent, so GitHub can match the labels.
    const answer = alerts.map((a, i) => ({ token_raw: a.token, token_type: a.type, label: labels[i] }));
    return new Response(JSON.stringify(answer), { status: 200, headers: { 'content-type': 'application/json' } });
  }

  return async function leakAlertHandler(request: Request): Promise<Response> {
    try {
      return await handle(request);
    } catch (error) {
      const problem = toProblem(error);
      return new Response(JSON.stringify(problem.body), { status: problem.status, headers: { ...problem.headers, 'content-type': PROBLEM_CONTENT_TYPE } });
    }
  };
}
