/**
 * Revocation bus: Redis pub/sub that carries keyring changes (`revoked`, `rotated`)
 * between instances, so each one drops its cached verification results for that
 * identity (DESIGN §3). The keyring is typed structurally (`onChange` + `invalidate`),
 * so the bus depends on no keyring implementation.
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
  type: 'revoked' | 'rotated';
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
  /** @default console */
  logger?: RevocationBusLogger;
}

/** A running bus. */
export interface RevocationBus {
  /** Resolves once Redis has acknowledged the SUBSCRIBE; rejects if it failed. */
  readonly ready: Promise<void>;
  /** This instance's id, sent with each message so it can skip its own. */
  readonly instanceId: string;
  /**
   * Publishes one event. Resolves when Redis has handed it to every subscribed
   * connection (each instance evicts as soon as it reads it: about a millisecond).
   */
  publish(event: RevocationEvent): Promise<void>;
  /** Stops listening and publishing. Leaves both connections open. */
  close(): Promise<void>;
}

const TYPES: ReadonlySet<string> = new Set(['revoked', 'rotated']);
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
 * await keyring.revoke(id); // resolves after the PUBLISH: other instances evict within ~1 ms
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
    logger = consoleLogger,
  } = options;
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

  function onMessage(from: string, message: string): void {
    if (closed || from !== channel) return;
    const event = parse(message);
    if (event === undefined || event.origin === instanceId) return;
    keyring.invalidate(event.id);
  }

  subscriber.on('message', onMessage);
  const ready = subscriber.subscribe(channel).then(() => undefined);
  // Nobody has to await `ready`; an unobserved failure must not crash the process.
  ready.catch(() => undefined);

  async function publish(event: RevocationEvent): Promise<void> {
    if (typeof event !== 'object' || event === null || !TYPES.has(event.type) || !validId(event.id)) {
      throw new ConfigError('A revocation event is { type: "revoked" | "rotated", id: string }');
    }
    if (closed) throw new Error('The revocation bus is closed');
    const message = JSON.stringify({ v: 1, origin: instanceId, type: event.type, id: event.id });
    await withTimeout(publisher.publish(channel, message), timeoutMs, 'Redis PUBLISH');
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

/** The message if it is well formed, else `undefined`: junk on the channel is ignored. */
function parse(message: string): (RevocationEvent & { origin: string }) | undefined {
  let value: unknown;
  try {
    value = JSON.parse(message);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const { v, origin, type, id } = value as Record<string, unknown>;
  if (v !== 1 || typeof origin !== 'string' || typeof type !== 'string' || !TYPES.has(type) || !validId(id)) return undefined;
  return { origin, type: type as RevocationEvent['type'], id };
}

function validId(id: unknown): id is string {
  return typeof id === 'string' && id.length > 0 && id.length <= MAX_ID_LENGTH;
}
