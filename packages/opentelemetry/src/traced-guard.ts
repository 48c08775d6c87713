/**
 * `telemetry.guard(guard)`: the same guard, each check counted by outcome and route, timed,
 * and (with a tracer) run inside a `keyset.check` span that is the active span, so the
 * store calls it makes become its children. An admitted request counts as in flight until
 * the adapter calls its `release()`.
 * @module
 */
import { SpanKind, SpanStatusCode, type Attributes, type Span, type Tracer } from '@opentelemetry/api';
import type { ApiKeyGuard, ApiKeyGuardCheckOptions, ApiKeyGuardRequest, ApiKeyGuardResult } from '@keyset/core';
import { ERROR_TYPE, OUTCOME, OWNER, WOULD_REFUSE_REASON, errorType, isServerFailure, outcomeOf, routeAttributes } from './internal/attributes.ts';
import type { Instruments } from './internal/instruments.ts';

/** Internal: see `KeysetTelemetry.guard`. */
export function tracedGuard(guard: ApiKeyGuard, instruments: Instruments | undefined, tracer: Tracer | undefined, ownerAttribute: boolean): ApiKeyGuard {
  // Route names are configuration (a handful per application): their attributes are
  // worked out once each, not on every request.
  const routes = new Map<string | undefined, Attributes>();
  const attributesOf = (route: string | undefined): Attributes => {
    let attributes = routes.get(route);
    if (attributes === undefined) routes.set(route, (attributes = Object.freeze(routeAttributes(route))));
    return attributes;
  };

  async function measure(request: ApiKeyGuardRequest, options: ApiKeyGuardCheckOptions | undefined, route: Attributes, span: Span | undefined): Promise<ApiKeyGuardResult> {
    const started = performance.now();
    let result: ApiKeyGuardResult;
    try {
      result = await guard.check(request, options);
    } catch (error) {
      const attributes = { ...route, [OUTCOME]: outcomeOf(error) };
      instruments?.decisions.add(1, attributes);
      instruments?.checkDuration.record((performance.now() - started) / 1000, attributes);
      if (span !== undefined) {
        span.setAttribute(OUTCOME, attributes[OUTCOME]);
        // A refusal is the guard doing its job: only a server's failure marks the span.
        if (isServerFailure(error)) {
          span.setAttribute(ERROR_TYPE, errorType(error));
          span.setStatus({ code: SpanStatusCode.ERROR });
        }
        span.end();
      }
      throw error;
    }
    const owner = result.key.ownerId;
    // Served, but an observed (shadow) limit would have refused it: counted as such, by reason.
    const { wouldRefuse } = result;
    const decided: Attributes = wouldRefuse === undefined ? { [OUTCOME]: 'allowed' } : { [OUTCOME]: 'would_refuse', [WOULD_REFUSE_REASON]: wouldRefuse.reason };
    if (ownerAttribute && typeof owner === 'string') decided[OWNER] = owner;
    const attributes = { ...route, ...decided };
    instruments?.decisions.add(1, attributes);
    instruments?.checkDuration.record((performance.now() - started) / 1000, attributes);
    if (span !== undefined) {
      span.setAttributes(decided);
      span.end();
    }
    return instruments === undefined ? result : counted(result, route);
  }

  /** The result with a `release` that also ends its count in `keyset.leases.in_flight` (once, however often it is called). */
  function counted(result: ApiKeyGuardResult, route: Attributes): ApiKeyGuardResult {
    const { release } = result;
    if (release === undefined || instruments === undefined) return result;
    const { leases } = instruments;
    leases.add(1, route);
    let held = true;
    return {
      ...result,
      release() {
        if (held) {
          held = false;
          leases.add(-1, route);
        }
        release();
      },
    };
  }

  function check(request: ApiKeyGuardRequest, options?: ApiKeyGuardCheckOptions): Promise<ApiKeyGuardResult> {
    const route = attributesOf(options?.route);
    if (tracer === undefined) return measure(request, options, route, undefined);
    return tracer.startActiveSpan('keyset.check', { kind: SpanKind.INTERNAL, attributes: route }, (span) => measure(request, options, route, span));
  }

  return Object.freeze({ check });
}
