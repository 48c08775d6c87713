/**
 * Revocation bus: Redis pub/sub that carries keyring changes (`revoked`, `rotated`)
 * between instances, so each one drops its cached verification results for that
 * identity. The keyring is typed structurally (`onChange` + `invalidate`), so the bus
 * depends on no keyring implementation.
 *
 * "Evicted everywhere before `revoke()` returns", so that no instance admits a revoked key
 * once the revocation is answered: every instance that reads an event evicts, then
 * acknowledges on the same channel. PUBLISH answers how many
 * connections received the event, so the publisher knows how many acknowledgements to
 * wait for, and `publish()` (hence `revoke()`) resolves when all have arrived, or after
 * `ackTimeoutMs` with a warning naming how many were missing.
 *
 * Delivery is at most once, as Redis pub/sub is: an instance disconnected at that
 * moment misses the message. So when the subscriber connection drops, the bus drops
 * every cached verification result (`keyring.invalidateAll()`), and again once it is
 * subscribed anew: no key revoked during the gap is served from the cache after it.
 * @module
 */
import { ConfigError } from '@keyset/core';
import { assertKnownOptions, createRevocationProtocol, isRevocationEvent, type KnownOptions, withTimeout } from '@keyset/core/adapter';
import type { RevocationBusLogger, RevocationEvent, RevocationPublished } from '@keyset/core/adapter';

export type { RevocationBusLogger, RevocationEvent, RevocationPublished } from '@keyset/core/adapter';

/**
 * What the bus needs from a keyring (`createKeyring` from `@keyset/core` fits). A keyring
 * that awaits its listeners, as `createKeyring` does, lets `revoke()` resolve only once
 * the bus has handed the event to Redis.
 */
export interface RevocableKeyring {
  onChange(listener: (event: RevocationEvent) => void | Promise<void>): () => void;
  invalidate(identityId: string): void;
  /** Drops every cached result; called when the subscriber connection drops and when it listens again. */
  invalidateAll?(): void;
}

/** The publishing connection: any ioredis client. */
export interface RevocationPublisher {
  publish(channel: string, message: string): Promise<unknown>;
  /** Sharded PUBLISH (Redis 7), used with `sharded: true`. ioredis `Cluster` has it. */
  spublish?(channel: string, message: string): Promise<unknown>;
}

/** A connection dedicated to subscribing (ioredis: `redis.duplicate()`); the bus never closes it. */
export interface RevocationSubscriber {
  subscribe(channel: string): Promise<unknown>;
  unsubscribe(channel: string): Promise<unknown>;
  on(event: 'message' | 'smessage', listener: (channel: string, message: string) => void): unknown;
  off(event: 'message' | 'smessage', listener: (channel: string, message: string) => void): unknown;
  /** Connection lost (`'close'`) and back (`'ready'`): the bus drops cached keys across the gap. */
  on(event: 'close' | 'ready', listener: () => void): unknown;
  off(event: 'close' | 'ready', listener: () => void): unknown;
  /** Sharded SUBSCRIBE (Redis 7), used with `sharded: true`. */
  ssubscribe?(channel: string): Promise<unknown>;
  sunsubscribe?(channel: string): Promise<unknown>;
  /**
   * Connection state (ioredis: `'wait'`, `'connecting'`, `'ready'`, … `'end'`). With `once`,
   * lets the bus wait for a connection that is not ready yet instead of failing its SUBSCRIBE.
   */
  readonly status?: string;
  once?(event: 'ready' | 'end', listener: () => void): unknown;
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
   * Redis Cluster: use sharded pub/sub (`SSUBSCRIBE`/`SPUBLISH`, Redis 7), which stays inside
   * the shard that owns the channel's slot instead of broadcasting to every node. Create
   * both connections as ioredis `Cluster`s with `shardedSubscribers: true`.
   * @default false
   */
  sharded?: boolean;
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
  /**
   * Told after each publish how long the other instances took to confirm their eviction
   * (the bus's lag), e.g. `telemetry.onRevocationPublished`.
   * @default none
   */
  onPublished?: (event: RevocationPublished) => void;
}

/** Every name `RevocationBusOptions` knows, checked when the bus is made. */
const BUS_OPTIONS = { publisher: true, subscriber: true, keyring: true, channel: true, publishOnChange: true, sharded: true, timeoutMs: true, ackTimeoutMs: true, logger: true, onPublished: true } as const satisfies KnownOptions<RevocationBusOptions>;

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
 * await createKeyAdmin(keyring).revoke(id); // resolves once every other instance confirmed its eviction
 * ```
 */
export function createRevocationBus(options: RevocationBusOptions): RevocationBus {
  assertKnownOptions('createRevocationBus', options, BUS_OPTIONS);
  const {
    publisher,
    subscriber,
    keyring,
    channel = 'keyset:revocations',
    publishOnChange = true,
    timeoutMs = 1000,
    ackTimeoutMs = 250,
    logger = consoleLogger,
    sharded = false,
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
  if (sharded && (typeof publisher.spublish !== 'function' || typeof subscriber.ssubscribe !== 'function' || typeof subscriber.sunsubscribe !== 'function')) {
    throw new ConfigError('sharded: true needs spublish/ssubscribe/sunsubscribe: ioredis Cluster connections (shardedSubscribers: true) on Redis 7');
  }
  // One transport, plain or sharded; the protocol above it is the same.
  const send = (message: string): Promise<unknown> => (sharded ? publisher.spublish!(channel, message) : publisher.publish(channel, message));
  const listen = (): Promise<unknown> => (sharded ? subscriber.ssubscribe!(channel) : subscriber.subscribe(channel));
  const messageEvent = sharded ? 'smessage' : 'message';
  const what = sharded ? 'Redis SPUBLISH' : 'Redis PUBLISH';
  if (publisher === (subscriber as unknown)) {
    throw new ConfigError('publisher and subscriber must be two connections: a subscribed connection cannot PUBLISH');
  }

  let closed = false;
  // The acknowledgement protocol is core's (createRevocationProtocol); this bus only moves
  // its messages over Redis pub/sub.
  const protocol = createRevocationProtocol({
    invalidate: (id) => keyring.invalidate(id),
    sendAck: (ack) => withTimeout(send(ack), timeoutMs, what),
    ackTimeoutMs,
    logger,
    ...(options.onPublished === undefined ? {} : { onPublished: options.onPublished }),
  });
  const { instanceId } = protocol;

  function onMessage(from: string, message: string): void {
    if (closed || from !== channel) return;
    protocol.receive(message);
  }

  /*
   * A dropped connection misses every message until it listens again. Drop all cached
   * keys when it drops (what was cached may be revoked by then) and again once the
   * channel is subscribed anew (what was cached during the gap may be too). ioredis
   * re-subscribes by itself on 'ready'; subscribing again is harmless, and its answer
   * is the moment this instance is listening again.
   */
  let disconnected = false;
  const dropCache = (): void => keyring.invalidateAll?.();
  function onClose(): void {
    if (closed || disconnected) return;
    disconnected = true;
    dropCache();
    logger.warn({ channel }, 'revocation bus lost its subscriber connection: dropped cached keys; they are dropped again once it listens again');
  }
  function onReady(): void {
    if (closed || !disconnected) return;
    listen().then(
      () => {
        if (closed || !disconnected) return;
        disconnected = false;
        dropCache();
        logger.warn({ channel }, 'revocation bus listens again: dropped cached keys once more');
      },
      (error: unknown) => {
        logger.warn({ channel, error: error instanceof Error ? error.message : String(error) }, 'revocation bus could not subscribe again; retrying on the next reconnect');
      },
    );
  }

  subscriber.on(messageEvent, onMessage);
  subscriber.on('close', onClose);
  subscriber.on('ready', onReady);
  const ready = subscribe();
  // Nobody has to await `ready`; an unobserved failure must not crash the process.
  ready.catch(() => undefined);

  async function publish(event: RevocationEvent): Promise<void> {
    if (!isRevocationEvent(event)) throw new ConfigError('A revocation event is { type: "revoked" | "rotated" | "updated", id: string }');
    if (closed) throw new Error('The revocation bus is closed');
    // PUBLISH answers every receiving connection: ours (when subscribed) and one per other instance.
    await protocol.publish(event, async (message) => {
      const received = await withTimeout(send(message), timeoutMs, what);
      return typeof received === 'number' ? received : 0;
    });
  }

  /**
   * SUBSCRIBE, once the connection is ready. ioredis with `enableOfflineQueue: false`
   * rejects every command until then, which includes a `redis.duplicate()` made a moment
   * ago: wait for its `'ready'` and try again (the first attempt also starts a lazy
   * connection). Rejects if the connection ends first or the SUBSCRIBE itself fails.
   */
  async function subscribe(): Promise<void> {
    try {
      await listen();
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
    if (!closed) await listen();
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
      subscriber.off(messageEvent, onMessage);
      subscriber.off('close', onClose);
      subscriber.off('ready', onReady);
      const stop = sharded ? subscriber.sunsubscribe!(channel) : subscriber.unsubscribe(channel);
      await withTimeout(stop, timeoutMs, 'Redis UNSUBSCRIBE').catch(() => undefined);
    },
  });
}
