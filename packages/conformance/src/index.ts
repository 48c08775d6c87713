/**
 * `@keyset/conformance`: the HTTP conformance kit every keyset adapter's tests run.
 * Private workspace package, never published. `@keyset/conformance/fixture` is the
 * vitest-free part a server process imports to build the world it serves.
 * @module
 */
export { aborted, conformanceItems, createConformanceFixture, INFLIGHT_STATUSES, PERMITTED_QUERY, inflightChunks, MAX_ECHO_BYTES, OPTION_PEER, inflightStatus, inflightStream, LIMITS, NON_ERROR, PREFIX, REALM, RETHROWN, TOTAL_CAP, WORLD_PATH, worldResponse } from './fixture.ts';
export type { ConformanceFixture, Item, WorldReport } from './fixture.ts';
export { checkResponse, describeAdapterFuzz, fuzzAdapter, fuzzRequests, harvestCursors } from './fuzz.ts';
export type { FuzzRequest } from './fuzz.ts';
export { describeAdapterConformance } from './adapter-conformance.ts';
export { expectProblem } from './expect-problem.ts';
export { PARSED_QUERY_SEARCH } from './pagination-conformance.ts';
export { describeOneErrorPath } from './one-error-path.ts';
export type { OneErrorPathUnderTest } from './one-error-path.ts';
export { fixtureWorld, inProcess, overHttp, remoteWorld } from './world.ts';
export type { AdapterUnderTest, ConformanceWorld, Reported, RunningApp, SendRequest } from './world.ts';
export { describeRequestRules } from './request-rules.ts';
export type { RequestRulesUnderTest } from './request-rules.ts';
export { inProcessWithRaw, rawInProcess, rawOverSocket } from './raw-send.ts';
export type { RawResponse, RawSend } from './raw-send.ts';
export { keptAlive } from './kept-alive.ts';
export type { KeptAliveResponse } from './kept-alive.ts';
export { describeLeaseRenewal } from './lease-renewal.ts';
export { describeShadowLimits } from './shadow-limits.ts';
export type { LeaseApp, LeaseRenewalUnderTest, RealTimeLeaseStore } from './lease-renewal.ts';
