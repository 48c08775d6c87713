/**
 * What adapters read of errors their framework or its plugins raise for a client's
 * mistake: the 4xx status an `http-errors`-style error carries, and a JSON-schema (Ajv)
 * validation failure as `invalid_request` naming the field and the rule, never the value.
 * @module
 */
import { KeysetError, isKeysetError } from './errors.ts';

/**
 * The client status (400-499) on a non-keyset error's `status` or `statusCode`
 * (body-parser, Express's router, Fastify, `http-errors`), or `undefined`.
 *
 * @example
 * ```ts
 * clientErrorStatus(Object.assign(new Error('too large'), { status: 413 })); // 413
 * ```
 */
export function clientErrorStatus(error: unknown): number | undefined {
  if (typeof error !== 'object' || error === null || isKeysetError(error)) return undefined;
  const { statusCode, status } = error as { statusCode?: unknown; status?: unknown };
  const value = typeof status === 'number' ? status : statusCode;
  return typeof value === 'number' && Number.isInteger(value) && value >= 400 && value < 500 ? value : undefined;
}

/** Where a schema was checked (Fastify's `validationContext`) → the problem's `field` prefix. */
const PLACES: Readonly<Record<string, string>> = { body: 'body', querystring: 'query', query: 'query', params: 'path', headers: 'headers' };

/**
 * A JSON-schema validation failure (Ajv's first error: `keyword`, `instancePath`,
 * `params`, `message`) as 400 `invalid_request`: `field` is where (`body.name`), `detail`
 * the schema's rule (`` `body.name` is required. ``); the value sent is never quoted.
 *
 * @example
 * ```ts
 * schemaValidationError({ keyword: 'required', instancePath: '', params: { missingProperty: 'name' } }, 'body').extensions.field; // 'body.name'
 * ```
 */
export function schemaValidationError(failure: unknown, place: unknown, cause?: unknown): KeysetError {
  const where = (typeof place === 'string' && PLACES[place]) || 'request';
  const { keyword, instancePath, params, message } = (failure ?? {}) as { keyword?: unknown; instancePath?: unknown; params?: unknown; message?: unknown };
  const pointer = typeof instancePath === 'string' ? instancePath.split('/').filter((part) => part !== '') : [];
  const missing = keyword === 'required' ? (params as { missingProperty?: unknown } | undefined)?.missingProperty : undefined;
  if (typeof missing === 'string') pointer.push(missing);
  const field = [where, ...pointer].join('.');
  const rule = typeof missing === 'string' ? 'is required' : typeof message === 'string' ? message : 'is not valid';
  return new KeysetError('invalid_request', { detail: `\`${field}\` ${rule}.`, extensions: { field }, cause });
}
