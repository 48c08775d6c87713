/**
 * @keyset/openapi: OpenAPI 3.1 components for APIs built with keyset, to merge into your
 * own document. No runtime dependencies besides `@keyset/core` (for the error catalogue).
 * @module
 */
export { ERROR_RESPONSES, SECURITY_SCHEME_NAMES, keysetComponents, problemCodes } from './components.ts';
export type { KeysetComponentsOptions } from './components.ts';
export { apiKeySecurity, errorResponses, keySecurity, pageParameters, pageResponses } from './operations.ts';
export type { PageResponsesOptions } from './operations.ts';
export type { JsonObject, JsonValue } from './json.ts';
