/**
 * Hand-written request validation: every refusal is a 400 `invalid_request` problem
 * whose `field` member names the offending parameter or body field (`rateLimit.limit`),
 * so a client can fix it without reading our source. Never a 500 for client input.
 * @module
 */
import { echoContentCoding, echoMediaType, KeysetError } from '@keyset/core';
import { closestName, parseInstant } from '@keyset/core/adapter';

/** Largest request body the example accepts. */
export const MAX_BODY_BYTES = 16 * 1024;

/** A 400 `invalid_request` naming `field`. */
export function invalid(field: string, detail: string): KeysetError {
  return new KeysetError('invalid_request', { detail, extensions: { field } });
}

/**
 * Refuses, before the body is read, what the app cannot read as JSON: a media type other
 * than JSON, or any content coding. The charset parameter is ignored: JSON is UTF-8 and
 * the parameter has no effect on it (RFC 8259 §8.1, §11). Neither server decodes
 * `gzip` & co. (RFC 9110 §8.4), so a coded body is refused alike on both, not misread.
 *
 * @example
 * ```ts
 * assertJsonBodyHeaders('application/json; charset=utf-8', undefined); // passes
 * ```
 */
export function assertJsonBodyHeaders(contentType: string | null | undefined, contentEncoding?: string | null): void {
  if (contentType) {
    const type = contentType.split(';', 1)[0]!.trim().toLowerCase();
    if (type !== 'application/json' && !/^application\/[a-z0-9.+-]+\+json$/.test(type)) {
      // A media type clients commonly send is named as it is; any other text is not echoed.
      const sent = echoMediaType(type);
      throw invalid('body', `Send a JSON body with \`Content-Type: application/json\`, not ${sent === undefined ? 'an unsupported media type' : `\`${sent}\``}`);
    }
  }
  const codings = (contentEncoding ?? '').split(',').map((c) => c.trim().toLowerCase()).filter((c) => c !== '' && c !== 'identity');
  if (codings.length > 0) {
    const known = codings.map(echoContentCoding);
    const sent = known.every((c) => c !== undefined) ? `\`${known.join(', ')}\`` : 'an unsupported coding';
    throw invalid('body', `Send the JSON body without a Content-Encoding (got ${sent})`);
  }
}

/**
 * Parses a JSON request body (UTF-8 text) into a plain object. The headers are checked
 * with `assertJsonBodyHeaders`: `contentType` may be absent or any JSON media type
 * (`application/json`, `application/merge-patch+json`); form posts, content-coded
 * bodies, malformed JSON, arrays and scalars are refused with `field: 'body'`.
 *
 * @example
 * ```ts
 * const body = parseJsonObject('{"name":"ci"}', 'application/json');
 * ```
 */
export function parseJsonObject(text: string, contentType: string | null | undefined, contentEncoding?: string | null): Record<string, unknown> {
  assertJsonBodyHeaders(contentType, contentEncoding);
  if (new TextEncoder().encode(text).byteLength > MAX_BODY_BYTES) {
    throw invalid('body', `The body is larger than ${MAX_BODY_BYTES} bytes`);
  }
  if (text.trim() === '') throw invalid('body', 'A JSON object body is required');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw invalid('body', 'The body is not valid JSON');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw invalid('body', 'The body must be a JSON object');
  }
  return value as Record<string, unknown>;
}

/**
 * The members a body may hold, at every depth: `true` for a member whose value is not
 * looked into here (a string, a number, free-form `metadata`), or the members of the
 * object it holds (of each object, for an array of them).
 */
export interface BodyShape {
  readonly [member: string]: true | BodyShape;
}

const isJsonObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Refuses a member `shape` does not list, at any depth: a typo must not pass silently (a
 * quota that never refills). The unknown name is client text and is not echoed: `field`
 * names the object that holds it (`quota`, `rateLimits[0]`, `body` at the top), and the
 * detail suggests the closest of our own names and lists the allowed ones. Values of
 * other types are left to the checks that follow.
 *
 * @example
 * ```ts
 * rejectUnknownMembers({ quota: { refil: {} } }, { quota: { remaining: true, refill: true } });
 * // KeysetError invalid_request, field `quota`: "`quota` has an unknown field; did you mean `quota.refill`? …"
 * ```
 */
export function rejectUnknownMembers(value: unknown, shape: BodyShape, path = ''): void {
  if (Array.isArray(value)) {
    value.forEach((element, i) => rejectUnknownMembers(element, shape, `${path}[${i}]`));
    return;
  }
  if (!isJsonObject(value)) return;
  const prefix = path === '' ? '' : `${path}.`;
  const allowed = Object.keys(shape);
  for (const name of Object.keys(value)) {
    const rule = shape[name];
    if (rule === undefined || !Object.hasOwn(shape, name)) {
      const holder = path === '' ? 'body' : path;
      const suggestion = closestName(name, allowed);
      const hint = suggestion === undefined ? '' : ` did you mean \`${prefix}${suggestion}\`?`;
      throw invalid(holder, `\`${holder}\` has an unknown field;${hint} allowed here: ${allowed.map((a) => `\`${prefix}${a}\``).join(', ')}`);
    }
    if (rule !== true) rejectUnknownMembers(value[name], rule, `${prefix}${name}`);
  }
}

/** Whether `value` is an integer from `min` to `max`. */
export function isIntegerIn(value: unknown, min: number, max: number): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= min && value <= max;
}

/**
 * One query parameter, at most once: `undefined` when absent; a repeated or empty
 * parameter is refused.
 */
export function singleParam(query: URLSearchParams, name: string): string | undefined {
  const values = query.getAll(name);
  if (values.length === 0) return undefined;
  if (values.length > 1) throw invalid(name, `\`${name}\` must be given once`);
  const value = values[0]!;
  if (value === '') throw invalid(name, `\`${name}\` must not be empty`);
  return value;
}

/**
 * A calendar date `YYYY-MM-DD` (years 0001–9999) that exists: `2024-02-30` is refused.
 *
 * @example
 * ```ts
 * isCalendarDate('2024-02-29'); // true
 * isCalendarDate('2023-02-29'); // false
 * ```
 */
export function isCalendarDate(text: string): boolean {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  if (!match) return false;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  if (year < 1 || month < 1 || month > 12 || day < 1) return false;
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  const days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]!;
  return day <= days;
}

/**
 * Query parameter `name` given once as an RFC 3339 instant in core's one range
 * (`parseInstant`), or undefined when absent; anything else is a 400 naming it.
 */
export function instantParam(query: URLSearchParams, name: string): Date | undefined {
  const text = singleParam(query, name);
  if (text === undefined) return undefined;
  const date = parseInstant(text);
  if (date === undefined) throw invalid(name, `\`${name}\` must be an RFC 3339 timestamp with an offset, from 0001-01-01T00:00:00Z to 9999-12-31T23:59:59.999Z in UTC, e.g. 2030-01-31T00:00:00Z`);
  return date;
}
