/**
 * In-flight (concurrency) limits: the store contract, and the leases a request claims from
 * a store that decides them with its limits (`RequestStore`). A lease is one admitted request
 * still at work; a store holds each holder's leases scored by expiry, so the lease of an
 * instance that died ends on its own.
 * @module
 */
import type { KeysetError } from '../errors.ts';
import type { WouldRefusal } from '../rate-limit/limit-mode.ts';

/** The store's answer to `acquire`. */
export interface LeaseDecision {
  /** Whether the lease was taken. */
  readonly acquired: boolean;
}

/**
 * Where leases live: the memory store (one instance) or Redis (every instance that shares
 * it). Both calls are one step each: one round trip to take, one to give back.
 */
export interface ConcurrencyStore {
  /**
   * Prunes the holder's expired leases, then takes `leaseId` for `ttlMs` if fewer than
   * `max` live leases remain. Never takes more than `max`, whoever else calls at once.
   * `partition` (on a key's lease: `owner:<id>` when it has an owner, else its id) is where
   * a sharded store keeps the holder's leases, beside the key's other counts (one Redis
   * Cluster slot); the
   * same holder always comes with the same partition. Stores keyed by holder alone ignore it.
   */
  acquire(holder: string, leaseId: string, max: number, ttlMs: number, partition?: string): LeaseDecision | Promise<LeaseDecision>;
  /** Gives a lease back; a lease already expired or released is a no-op. */
  release(holder: string, leaseId: string, partition?: string): void | Promise<void>;
  /**
   * Moves a live lease's expiry to `ttlMs` from now; `false` when the lease is no longer
   * live (expired, released). The limit renews the leases of requests still at work every
   * third of their time to live. A store without it: leases are never renewed.
   */
  renew?(holder: string, leaseId: string, ttlMs: number, partition?: string): boolean | Promise<boolean>;
}

/** One in-flight lease a request asks for, decided with its limits. */
export interface LeaseClaim {
  /** Whose leases: `key:<id>` or `owner:<id>`. */
  readonly holder: string;
  /**
   * Where a sharded store keeps the lease (one Cluster slot with the request's other
   * counts): on a key's lease `owner:<id>` when it has an owner, else the key's id.
   */
  readonly partition?: string;
  readonly leaseId: string;
  /** Live leases the holder may have, this one included. */
  readonly max: number;
  readonly ttlMs: number;
  /**
   * An observed (shadow) cap: at `max` it never refuses; the request would be refused
   * there, so the store takes none of the observed leases (and the guard reports it).
   */
  readonly observe?: boolean;
}

/**
 * The leases a request needs, named but not taken yet, for a store that decides them with
 * the request's limits in one step (`RequestStore.decideRequest`).
 */
export interface LeaseClaims {
  /** The store the leases live in. */
  readonly store: ConcurrencyStore;
  /** The key's lease (when its `max` applies), then its owner's. */
  readonly leases: readonly LeaseClaim[];
  /** The 429 `concurrency_limited` for the lease at `index` refused. */
  refusal(index: number): KeysetError;
  /** Once the store took every lease: gives them back together, renewed while at work. */
  held(): () => void;
  /**
   * Takes the leases one store call at a time (for a limiter that cannot decide them with
   * its limits): the enforced ones first, refused with `refusal(index)` (none kept); then
   * the observed ones, which never refuse.
   */
  take(): Promise<HeldLeases>;
}

/** The leases `LeaseClaims.take` took. */
export interface HeldLeases {
  /** Gives every lease taken back; calling it again does nothing. */
  readonly release: () => void;
  /** An observed cap at its max: the request would be refused there, and none of the observed leases was taken. */
  readonly wouldRefuse: WouldRefusal | undefined;
  /** Gives back the observed leases alone, for a request a later observed limit would refuse (an enforced one would have taken no lease). */
  readonly releaseObserved: () => void;
}
