/**
 * The acknowledged-eviction protocol every revocation bus speaks (Redis pub/sub, Redis
 * Cluster sharded pub/sub, PostgreSQL LISTEN/NOTIFY): "evicted everywhere before
 * `revoke()` returns" is a policy, so it lives here once and a bus only moves
 * text over its transport.
 *
 * An event goes out as `{ v: 1, origin, type, id, seq }`. Every instance that reads one
 * from another instance evicts the identity, then answers `{ v: 1, ack: seq, to: origin,
 * origin: self }` on the same channel. The transport's send tells how many connections
 * received the event (Redis: the PUBLISH reply; PostgreSQL: the listening sessions), our
 * own subscriber included when it is subscribed; ours counts once the event comes back to
 * it, so a subscriber that is down (reconnecting) is never mistaken for ourselves.
 * `publish` resolves when every other receiver acknowledged, or after `ackTimeoutMs` with
 * a warning naming how many did not.
 * @module
 */
import { ConfigError } from '../errors.ts';
import { assertKnownOptions, type KnownOptions } from '../internal/check-options.ts';
import { consoleWarnLogger } from '../internal/console-warn.ts';

/** A keyring change worth telling other instances about (the keyring's `KeyChangeEvent`). */
export interface RevocationEvent {
  /** `updated`: metadata or IP allowlist changed, so cached verified keys are stale. */
  type: 'revoked' | 'rotated' | 'updated';
  /** The identity id (never key text). */
  id: string;
}

/** Where a bus reports late acknowledgements and failed sends. pino and `console` fit. */
export interface RevocationBusLogger {
  warn(details: Record<string, unknown>, message: string): void;
}

/** Options of `createRevocationProtocol`. */
export interface RevocationProtocolOptions {
  /** Called with the identity id of every event another instance sends. */
  invalidate(identityId: string): void;
  /** Sends an acknowledgement on the channel; best effort (a failure is ignored). */
  sendAck(message: string): Promise<unknown>;
  /**
   * Longest wait, after the send, for every other instance to confirm its eviction.
   * 0 does not wait.
   * @default 250
   */
  ackTimeoutMs?: number;
  /** @default console */
  logger?: RevocationBusLogger;
  /**
   * Called once per `publish` that reached the channel, when every other instance has
   * acknowledged or the wait ended: the bus's lag, for metrics. A hook that throws is
   * ignored (the publish is not affected).
   */
  onPublished?: (event: RevocationPublished) => void;
}

/** What `onPublished` hears of one publish. Holds no key text: nothing but counts and a duration. */
export interface RevocationPublished {
  readonly type: RevocationEvent['type'];
  /**
   * Milliseconds from the send to the last acknowledgement (every other instance evicted
   * the identity), or to the end of the wait (`ackTimeoutMs`) when one did not answer; one
   * clock, this instance's, so no clock skew enters it.
   */
  readonly lagMs: number;
  /** Other instances that received the event. */
  readonly instances: number;
  /** Of those, how many did not acknowledge in time (0: every instance evicted before `publish` resolved). */
  readonly unacknowledged: number;
}

/** Every name `RevocationProtocolOptions` knows, checked when the protocol is made. */
const PROTOCOL_OPTIONS = { invalidate: true, sendAck: true, ackTimeoutMs: true, logger: true, onPublished: true } as const satisfies KnownOptions<RevocationProtocolOptions>;

/** One instance's side of the protocol. */
export interface RevocationProtocol {
  /** This instance's id, sent with each message so it can skip its own. */
  readonly instanceId: string;
  /** Handles one message read from the channel: evicts and acknowledges, or counts an acknowledgement. Junk is ignored. */
  receive(message: string): void;
  /**
   * Sends `event` with `send`, which resolves how many connections received it (ours
   * included when subscribed), then waits for the acknowledgements. Rejects when `send`
   * rejects; a `ConfigError` for a malformed event.
   */
  publish(event: RevocationEvent, send: (message: string) => Promise<number>): Promise<void>;
}

const TYPES: ReadonlySet<string> = new Set(['revoked', 'rotated', 'updated']);
const MAX_ID_LENGTH = 256;

interface Pending {
  acks: number;
  self: boolean;
  expected: number | undefined;
  done: () => void;
}

type BusMessage = (RevocationEvent & { origin: string; seq: number | undefined }) | { ack: number; to: string; origin: string };

/**
 * Creates one instance's side of the acknowledged-eviction protocol, for a bus to drive.
 *
 * @example
 * ```ts
 * const protocol = createRevocationProtocol({ invalidate: (id) => keyring.invalidate(id), sendAck: (m) => redis.publish('ch', m) });
 * subscriber.on('message', (_channel, message) => protocol.receive(message));
 * await protocol.publish({ type: 'revoked', id }, async (m) => Number(await redis.publish('ch', m)));
 * ```
 */
export function createRevocationProtocol(options: RevocationProtocolOptions): RevocationProtocol {
  assertKnownOptions('createRevocationProtocol', options, PROTOCOL_OPTIONS);
  const { invalidate, sendAck, ackTimeoutMs = 250, logger = consoleWarnLogger, onPublished } = options;
  if (onPublished !== undefined && typeof onPublished !== 'function') throw new ConfigError('onPublished must be a function');
  if (!Number.isFinite(ackTimeoutMs) || ackTimeoutMs < 0) throw new ConfigError(`ackTimeoutMs must be ≥ 0, got ${String(ackTimeoutMs)}`);
  if (typeof invalidate !== 'function' || typeof sendAck !== 'function') throw new ConfigError('createRevocationProtocol needs invalidate(id) and sendAck(message)');
  const instanceId = crypto.randomUUID();
  let sequence = 0;
  /** Publishes still waiting for receipts, by sequence number. */
  const waiting = new Map<number, Pending>();

  function settle(pending: Pending): void {
    if (pending.expected !== undefined && pending.acks + (pending.self ? 1 : 0) >= pending.expected) pending.done();
  }

  function receive(message: string): void {
    const parsed = parse(message);
    if (parsed === undefined) return;
    if ('ack' in parsed) {
      if (parsed.to !== instanceId) return;
      const pending = waiting.get(parsed.ack);
      if (pending === undefined) return;
      pending.acks++;
      settle(pending);
      return;
    }
    if (parsed.origin === instanceId) {
      const pending = parsed.seq === undefined ? undefined : waiting.get(parsed.seq);
      if (pending !== undefined) {
        pending.self = true;
        settle(pending);
      }
      return;
    }
    invalidate(parsed.id);
    if (parsed.seq !== undefined) {
      const ack = JSON.stringify({ v: 1, ack: parsed.seq, to: parsed.origin, origin: instanceId });
      // A send that throws synchronously must not stop the receiving loop either.
      Promise.resolve()
        .then(() => sendAck(ack))
        .catch(() => undefined);
    }
  }

  async function publish(event: RevocationEvent, send: (message: string) => Promise<number>): Promise<void> {
    if (typeof event !== 'object' || event === null || !TYPES.has(event.type) || !validId(event.id)) {
      throw new ConfigError('A revocation event is { type: "revoked" | "rotated" | "updated", id: string }');
    }
    const seq = ++sequence;
    const message = JSON.stringify({ v: 1, origin: instanceId, type: event.type, id: event.id, seq });
    let acknowledged!: () => void;
    const allAcknowledged = new Promise<void>((resolve) => (acknowledged = resolve));
    // Registered before the send: an acknowledgement may arrive before its reply.
    const pending: Pending = { acks: 0, self: false, expected: undefined, done: acknowledged };
    waiting.set(seq, pending);
    let sentAt: number | undefined;
    try {
      const startedAt = performance.now();
      const received = await send(message);
      sentAt = startedAt;
      pending.expected = Number.isSafeInteger(received) && received > 0 ? received : 0;
      if (pending.acks + (pending.self ? 1 : 0) >= pending.expected || ackTimeoutMs === 0) return;
      let timer: ReturnType<typeof setTimeout> | undefined;
      const timedOut = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(true), ackTimeoutMs)));
      const late = await Promise.race([allAcknowledged.then(() => false), timedOut]);
      clearTimeout(timer);
      if (late) {
        const others = pending.self ? pending.expected - 1 : pending.expected;
        logger.warn(
          {
            type: event.type,
            id: event.id,
            instances: others,
            unacknowledged: others - pending.acks,
            // Our own subscriber never saw the event: acknowledgements cannot reach us either.
            ...(pending.self ? {} : { subscribed: false }),
          },
          'not every instance confirmed the eviction in time; those keep their cache entry until its TTL',
        );
      }
    } finally {
      waiting.delete(seq);
      if (sentAt !== undefined) published(event.type, sentAt, pending);
    }
  }

  /** Tells `onPublished` how long the publish waited and who did not answer; a throwing hook is ignored. */
  function published(type: RevocationEvent['type'], sentAt: number, pending: Pending): void {
    if (onPublished === undefined) return;
    const expected = pending.expected ?? 0;
    const instances = Math.max(0, pending.self ? expected - 1 : expected);
    try {
      onPublished({ type, lagMs: performance.now() - sentAt, instances, unacknowledged: Math.max(0, instances - pending.acks) });
    } catch {
      // A metrics hook must not fail a revocation.
    }
  }

  return Object.freeze({ instanceId, receive, publish });
}

/** The message if it is well formed, else `undefined`: junk on the channel is ignored. */
function parse(message: string): BusMessage | undefined {
  if (typeof message !== 'string' || message.length > 4096) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(message);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const { v, origin, type, id, seq, ack, to } = value as Record<string, unknown>;
  if (v !== 1 || typeof origin !== 'string') return undefined;
  if (ack !== undefined) return Number.isSafeInteger(ack) && typeof to === 'string' ? { ack: ack as number, to, origin } : undefined;
  if (typeof type !== 'string' || !TYPES.has(type) || !validId(id)) return undefined;
  if (seq !== undefined && !Number.isSafeInteger(seq)) return undefined;
  return { origin, type: type as RevocationEvent['type'], id, seq: seq as number | undefined };
}

/** Whether `event` is a well-formed revocation event. */
export function isRevocationEvent(event: unknown): event is RevocationEvent {
  return typeof event === 'object' && event !== null && TYPES.has((event as RevocationEvent).type) && validId((event as RevocationEvent).id);
}

function validId(id: unknown): id is string {
  return typeof id === 'string' && id.length > 0 && id.length <= MAX_ID_LENGTH;
}
