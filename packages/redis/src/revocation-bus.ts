/**
 * Revocation bus: Redis pub/sub that carries keyring changes (`revoked`, `rotated`)
 * between instances, so each one drops its cached verification results for that
 * identity (DESIGN §3). The keyring is typed structurally (`onChange` + `invalidate`),
 * so the bus depends on no keyring implementation.
 *
 * "Evicted everywhere before `revoke()` returns" (DESIGN §3): every instance that reads
 * an event evicts, then acknowledges on the same channel. PUBLISH answers how many
 * connections received the event, so the publisher knows how many acknowledgements to
 * wait for, and `publish()` (hence `revoke()`) resolves when all have arrived, or after
 * `ackTimeoutMs` with a warning naming how many were missing.
 *
 * Delivery is at most once, as Redis pub/sub is: an instance disconnected at that
 * moment misses the message, and its cache TTL bounds how long it may still accept
 * the key. ioredis re-subscribes by itself after a reconnect.
 * @module
 */
import { ConfigError } from '@keyset/core';
import { withTimeout } from './internal/with-timeout.ts';

/** A keyring change worth telling other instances about. */
export interface RevocationEvent {
  /** `updated`: metadata or IP allowlist changed (cached verified keys are stale). */
  type: 'revoked' | 'rotated' | 'updated';
  /** The identity id (never key text). */
  id: string;
}

/**
 * What the bus needs from a keyring (`createKeyring` from `@keyset/core` fits). A keyring
 * that awaits its listeners, as `createKeyring` does, lets `revoke()` resolve only once
 * the bus has handed the event to Redis.
 */
export interface RevocableKeyring {
  onChange(listener: (event: RevocationEvent) => void | Promise<void>): () => void;
  invalidate(identityId: string): void;
}

/** The publishing connection: any ioredis client. */
export interface RevocationPublisher {
  publish(channel: string, message: string): Promise<unknown>;
}

/** A connection dedicated to subscribing (ioredis: `redis.duplicate()`); the bus never closes it. */
export interface RevocationSubscriber {
  subscribe(channel: string): Promise<unknown>;
  unsubscribe(channel: string): Promise<unknown>;
  on(event: 'message', listener: (channel: string, message: string) => void): unknown;
  off(event: 'message', listener: (channel: string, message: string) => void): unknown;
  /**
   * Connection state (ioredis: `'wait'`, `'connecting'`, `'ready'`, … `'end'`). With `once`,
   * lets the bus wait for a connection that is not ready yet instead of failing its SUBSCRIBE.
   */
  readonly status?: string;
  once?(event: 'ready' | 'end', listener: () => void): unknown;
}

/** Where the bus reports failed publishes. pino and `console` fit. */
export interface RevocationBusLogger {
  warn(details: Record<string, unknown>, message: string): void;
}

/** Options of `createRevocationBus`. */
export interface RevocationBusOptions {
  publisher: RevocationPublisher;
  subscriber: RevocationSubscriber;
  keyring: RevocableKeyring;
  /**
   * Pub/sub channel; every instance of one deployment uses the same.
   * @default 'keyset:revocations'
   */
  channel?: string;
  /**
   * Publish every `keyring.onChange` event (the listener returns the PUBLISH promise, so
   * `createKeyring`'s `revoke()` waits for it). Turn off to call `bus.publish()` yourself;
   * leaving both on only sends each event twice, which is harmless.
   * @default true
   */
  publishOnChange?: boolean;
  /**
   * Longest wait for a PUBLISH.
   * @default 1000
   */
  timeoutMs?: number;
  /**
   * Longest wait, after the PUBLISH, for every other instance to confirm it evicted.
   * 0 does not wait. An instance that misses it still drops the entry at its cache TTL.
   * @default 250
   */
  ackTimeoutMs?: number;
  /** @default console */
  logger?: RevocationBusLogger;
}

/** A running bus. */
export interface RevocationBus {
  /**
   * Resolves once Redis has acknowledged the SUBSCRIBE, made as soon as the subscriber
   * connection is ready; rejects if it failed or the connection ended first.
   */
  readonly ready: Promise<void>;
  /** This instance's id, sent with each message so it can skip its own. */
  readonly instanceId: string;
  /**
   * Publishes one event. Resolves when every other subscribed instance has acknowledged
   * its eviction (about a millisecond), or after `ackTimeoutMs`.
   */
  publish(event: RevocationEvent): Promise<void>;
  /** Stops listening and publishing. Leaves both connections open. */
  close(): Promise<void>;
}

const TYPES: ReadonlySet<string> = new Set(['revoked', 'rotated', 'updated']);
const MAX_ID_LENGTH = 256;

const consoleLogger: RevocationBusLogger = {
  warn: (details, message) => console.warn(`[keyset] ${message}`, details),
};

/**
 * Connects a keyring to the other instances: its changes are published, and changes
 * published by other instances call `keyring.invalidate(id)` here.
 *
 * @example
 * ```ts
 * const bus = createRevocationBus({ publisher: redis, subscriber: redis.duplicate(), keyring });
 * await bus.ready;
 * await keyring.revoke(id); // resolves once every other instance confirmed its eviction
 * ```
 */
export function createRevocationBus(options: RevocationBusOptions): RevocationBus {
  const {
    publisher,
    subscriber,
    keyring,
    channel = 'keyset:revocations',
    publishOnChange = true,
    timeoutMs = 1000,
    ackTimeoutMs = 250,
    logger = consoleLogger,
  } = options;
  if (!Number.isFinite(ackTimeoutMs) || ackTimeoutMs < 0) throw new ConfigError(`ackTimeoutMs must be ≥ 0, got ${String(ackTimeoutMs)}`);
  if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) {
    throw new ConfigError(`timeoutMs must be a positive number of milliseconds, got ${String(timeoutMs)}`);
  }
  if (typeof publisher?.publish !== 'function') throw new ConfigError('createRevocationBus needs `publisher`: an ioredis client');
  if (typeof subscriber?.subscribe !== 'function' || typeof subscriber.on !== 'function') {
    throw new ConfigError('createRevocationBus needs `subscriber`: a dedicated ioredis connection (redis.duplicate())');
  }
  if (typeof keyring?.onChange !== 'function' || typeof keyring.invalidate !== 'function') {
    throw new ConfigError('createRevocationBus needs `keyring` with onChange(listener) and invalidate(id)');
  }
  if (typeof channel !== 'string' || channel === '') throw new ConfigError('channel must be a non-empty string');
  if (publisher === (subscriber as unknown)) {
    throw new ConfigError('publisher and subscriber must be two connections: a subscribed connection cannot PUBLISH');
  }

  const instanceId = crypto.randomUUID();
  let closed = false;
  let sequence = 0;
  /**
   * Publishes still waiting for receipts, by event sequence number: `self` once our own
   * subscriber has received the event, `acks` from other instances, `expected` = the
   * PUBLISH reply (every receiving connection, ours included when it is subscribed).
   */
  const waiting = new Map<number, Pending>();

  function settle(pending: Pending): void {
    if (pending.expected !== undefined && pending.acks + (pending.self ? 1 : 0) >= pending.expected) pending.done();
  }

  function onMessage(from: string, message: string): void {
    if (closed || from !== channel) return;
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
      // Our own event came back: our subscriber is one of the receivers PUBLISH counted.
      // (When it is not subscribed, e.g. reconnecting, PUBLISH counts only the others.)
      const pending = parsed.seq === undefined ? undefined : waiting.get(parsed.seq);
      if (pending !== undefined) {
        pending.self = true;
        settle(pending);
      }
      return;
    }
    keyring.invalidate(parsed.id);
    if (parsed.seq !== undefined) {
      const ack = JSON.stringify({ v: 1, ack: parsed.seq, to: parsed.origin, origin: instanceId });
      withTimeout(publisher.publish(channel, ack), timeoutMs, 'Redis PUBLISH').catch(() => undefined);
    }
  }

  subscriber.on('message', onMessage);
  const ready = subscribe();
  // Nobody has to await `ready`; an unobserved failure must not crash the process.
  ready.catch(() => undefined);

  async function publish(event: RevocationEvent): Promise<void> {
    if (typeof event !== 'object' || event === null || !TYPES.has(event.type) || !validId(event.id)) {
      throw new ConfigError('A revocation event is { type: "revoked" | "rotated" | "updated", id: string }');
    }
    if (closed) throw new Error('The revocation bus is closed');
    const seq = ++sequence;
    const message = JSON.stringify({ v: 1, origin: instanceId, type: event.type, id: event.id, seq });
    let acknowledged!: () => void;
    const allAcknowledged = new Promise<void>((resolve) => (acknowledged = resolve));
    // Registered before the PUBLISH: an acknowledgement may arrive before its reply.
    const pending: Pending = { acks: 0, self: false, expected: undefined, done: acknowledged };
    waiting.set(seq, pending);
    try {
      const received = await withTimeout(publisher.publish(channel, message), timeoutMs, 'Redis PUBLISH');
      // Every receiving connection: our own subscriber (when subscribed) and one per other
      // instance. Our subscriber counts as received once the event comes back to it, so a
      // subscriber that is down (reconnecting) is never mistaken for ourselves.
      pending.expected = typeof received === 'number' ? received : 0;
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
    }
  }

  /**
   * SUBSCRIBE, once the connection is ready. ioredis with `enableOfflineQueue: false`
   * rejects every command until then, which includes a `redis.duplicate()` made a moment
   * ago: wait for its `'ready'` and try again (the first attempt also starts a lazy
   * connection). Rejects if the connection ends first or the SUBSCRIBE itself fails.
   */
  async function subscribe(): Promise<void> {
    try {
      await subscriber.subscribe(channel);
      return;
    } catch (error) {
      const { status } = subscriber;
      if (typeof subscriber.once !== 'function' || typeof status !== 'string' || status === 'ready' || status === 'end') throw error;
    }
    // A promise settles once: whichever of the two events comes second is a no-op.
    await new Promise<void>((resolve, reject) => {
      subscriber.once?.('ready', resolve);
      subscriber.once?.('end', () => reject(new Error('The revocation bus subscriber connection ended before it was ready')));
    });
    if (!closed) await subscriber.subscribe(channel);
  }

  const stopListening = publishOnChange
    ? keyring.onChange((event) =>
        publish(event).catch((error: unknown) => {
          logger.warn(
            { type: event.type, id: event.id, error: error instanceof Error ? error.message : String(error) },
            'could not publish a keyring change; other instances keep their cache until its TTL',
          );
        }),
      )
    : (): void => undefined;

  return Object.freeze({
    ready,
    instanceId,
    publish,
    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      stopListening();
      subscriber.off('message', onMessage);
      await withTimeout(subscriber.unsubscribe(channel), timeoutMs, 'Redis UNSUBSCRIBE').catch(() => undefined);
    },
  });
}

interface Pending {
  acks: number;
  self: boolean;
  expected: number | undefined;
  done: () => void;
}

type BusMessage = (RevocationEvent & { origin: string; seq: number | undefined }) | { ack: number; to: string; origin: string };

/** The message if it is well formed, else `undefined`: junk on the channel is ignored. */
function parse(message: string): BusMessage | undefined {
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

function validId(id: unknown): id is string {
  return typeof id === 'string' && id.length > 0 && id.length <= MAX_ID_LENGTH;
}
