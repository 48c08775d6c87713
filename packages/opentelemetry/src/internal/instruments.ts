/**
 * The instruments one telemetry object records into, created once from the user's meter.
 * Names and units follow the OpenTelemetry semantic conventions where one applies.
 * @module
 */
import type { Counter, Histogram, Meter, UpDownCounter } from '@opentelemetry/api';

/** Bucket bounds in seconds: from 50 µs (a cached key, a memory store) to 10 s (a store timing out). */
const SECONDS_BUCKETS = [0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export interface Instruments {
  decisions: Counter;
  checkDuration: Histogram;
  leases: UpDownCounter;
  verifyDuration: Histogram;
  cacheLookups: Counter;
  usageFlushLag: Histogram;
  usageDropped: Counter;
  storeDuration: Histogram;
  storeFailures: Counter;
  limiterDecisions: Counter;
  revocationLag: Histogram;
}

export function createInstruments(meter: Meter): Instruments {
  const seconds = { unit: 's', advice: { explicitBucketBoundaries: SECONDS_BUCKETS } };
  return {
    decisions: meter.createCounter('keyset.decisions', { unit: '{decision}', description: 'Guard checks by outcome: allowed, or the problem code that refused the request' }),
    checkDuration: meter.createHistogram('keyset.check.duration', { ...seconds, description: 'Duration of a guard check, from the request to the decision' }),
    leases: meter.createUpDownCounter('keyset.leases.in_flight', { unit: '{lease}', description: 'Admitted requests whose in-flight lease the adapter has not released yet' }),
    verifyDuration: meter.createHistogram('keyset.key.verification.duration', { ...seconds, description: 'Duration of identifying a key (header, checksum, cache, store)' }),
    cacheLookups: meter.createCounter('keyset.key.cache.lookups', { unit: '{lookup}', description: "The keyring's cache lookups by result: hit, negative_hit, or miss (the store was asked)" }),
    usageFlushLag: meter.createHistogram('keyset.usage.flush.lag', { ...seconds, description: "How far behind the usage store was when a flush ended: the age of the oldest count it wrote" }),
    usageDropped: meter.createCounter('keyset.usage.dropped', { unit: '{request}', description: 'Requests whose usage counts were dropped (more key-minutes pending than maxPendingKeys)' }),
    storeDuration: meter.createHistogram('keyset.store.duration', { ...seconds, description: 'Duration of a store call, by store and operation' }),
    storeFailures: meter.createCounter('keyset.store.failures', { unit: '{failure}', description: 'Store calls that threw or rejected, by store and operation' }),
    limiterDecisions: meter.createCounter('keyset.limiter.decisions', { unit: '{decision}', description: "The limiter's decisions (onDecision), by outcome" }),
    revocationLag: meter.createHistogram('keyset.revocation.lag', { ...seconds, description: 'From publishing a key change on the revocation bus to the last other instance confirming its eviction (or the end of the wait)' }),
  };
}
