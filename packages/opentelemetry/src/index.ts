/**
 * `@keyset/opentelemetry`: keyset's decisions, key verification and store calls as
 * OpenTelemetry metrics and spans (docs/observability.md lists every metric and span).
 * @module
 */
export { INSTRUMENTATION_SCOPE, createKeysetTelemetry } from './keyset-telemetry.ts';
export type { KeysetTelemetry, KeysetTelemetryOptions } from './keyset-telemetry.ts';
