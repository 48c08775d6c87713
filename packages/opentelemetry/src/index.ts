/**
 * `@keyset/opentelemetry`: keyset's decisions, key verification and store calls as
 * OpenTelemetry metrics and spans, through the meter and tracer the application passes.
 * @module
 */
export { INSTRUMENTATION_SCOPE, createKeysetTelemetry } from './keyset-telemetry.ts';
export type { KeysetTelemetry, KeysetTelemetryOptions } from './keyset-telemetry.ts';
