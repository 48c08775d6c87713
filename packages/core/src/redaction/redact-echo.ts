/**
 * The one rule for client text keyset repeats (a problem's `detail` and `field`, a
 * `WWW-Authenticate` challenge, a `Link`, a log line): a client's text is repeated only
 * when it is a word of a closed vocabulary, one keyset or the application knows (a media
 * type's `type/subtype`, a parameter or field name the endpoint declared, an HTTP
 * authentication scheme, a content coding), and then in that vocabulary's own spelling.
 * Anything else is named, not echoed ("an unsupported scheme", "an unknown field"): no
 * cut of it, however short, is shown. A vocabulary is fixed before any request arrives,
 * so no client can make it carry a key, whole, cut, split or recased, and no word of it
 * is garbled (`application/x-www-form-urlencoded` stays whole).
 *
 * Paths are the exception a closed vocabulary cannot cover: a problem's `instance` and an
 * access log's URL go through `redactRuns` (no 8 letters and digits in a row).
 * @module
 */

/** Media types clients commonly send, as `type/subtype` (RFC 9110 §8.3.1), lowercase. */
const MEDIA_TYPES: ReadonlySet<string> = new Set([
  'application/json',
  'application/problem+json',
  'application/merge-patch+json',
  'application/json-patch+json',
  'application/ld+json',
  'application/hal+json',
  'application/vnd.api+json',
  'application/x-ndjson',
  'application/x-www-form-urlencoded',
  'application/xml',
  'application/soap+xml',
  'application/octet-stream',
  'application/javascript',
  'application/yaml',
  'application/x-yaml',
  'application/graphql',
  'application/cbor',
  'application/msgpack',
  'application/x-msgpack',
  'application/protobuf',
  'application/x-protobuf',
  'application/grpc',
  'application/jwt',
  'application/pdf',
  'application/zip',
  'application/gzip',
  'multipart/form-data',
  'multipart/mixed',
  'text/plain',
  'text/html',
  'text/csv',
  'text/xml',
  'text/yaml',
  'text/javascript',
  'text/event-stream',
  'image/png',
  'image/jpeg',
  'image/gif',
  'image/webp',
  'image/svg+xml',
]);

/**
 * HTTP authentication schemes (the IANA registry, RFC 9110 §16.4, and the unregistered
 * ones clients commonly send), in their usual spelling, by lowercase name.
 */
const AUTH_SCHEMES: ReadonlyMap<string, string> = new Map(
  ['ApiKey', 'Basic', 'Bearer', 'Concealed', 'Digest', 'DPoP', 'GNAP', 'HOBA', 'Mutual', 'Negotiate', 'NTLM', 'OAuth', 'PrivateToken', 'SCRAM-SHA-1', 'SCRAM-SHA-256', 'vapid', 'Token', 'Key', 'Hawk', 'AWS4-HMAC-SHA256'].map(
    (scheme) => [scheme.toLowerCase(), scheme],
  ),
);

/** Content codings (the IANA HTTP Content Coding registry, RFC 9110 §8.4.1). */
const CONTENT_CODINGS: ReadonlySet<string> = new Set(['aes128gcm', 'br', 'compress', 'dcb', 'dcz', 'deflate', 'exi', 'gzip', 'identity', 'pack200-gzip', 'x-compress', 'x-gzip', 'zstd']);

/**
 * The `type/subtype` of a `Content-Type` value, lowercase, when it is a media type clients
 * commonly send (`application/x-www-form-urlencoded`, `text/plain`, `multipart/form-data`,
 * …); `undefined` for any other, which a message names without quoting ("an unsupported
 * media type"). Parameters (`; charset=…`) are never echoed.
 *
 * @example
 * ```ts
 * echoMediaType('Application/X-WWW-Form-Urlencoded; charset=utf-8'); // 'application/x-www-form-urlencoded'
 * echoMediaType('text/OiLzh74MVrNeFH1NUbIt'); // undefined
 * ```
 */
export function echoMediaType(contentType: string | null | undefined): string | undefined {
  if (typeof contentType !== 'string') return undefined;
  const type = contentType.split(';', 1)[0]!.trim().toLowerCase();
  return MEDIA_TYPES.has(type) ? type : undefined;
}

/**
 * An HTTP authentication scheme in its usual spelling (`bearer` → `Bearer`), when `scheme`
 * is one (case-insensitively, RFC 9110 §11.1); `undefined` for any other word, such as a
 * key sent without a scheme, which a message names without quoting ("an unsupported
 * scheme").
 *
 * @example
 * ```ts
 * echoAuthScheme('bearer'); // 'Bearer'
 * echoAuthScheme('OiLzh74MVrNeFH1NUbIt'); // undefined
 * ```
 */
export function echoAuthScheme(scheme: string | null | undefined): string | undefined {
  return typeof scheme === 'string' ? AUTH_SCHEMES.get(scheme.toLowerCase()) : undefined;
}

/**
 * A `Content-Encoding` coding in lowercase, when it is a registered content coding (`gzip`,
 * `br`, `zstd`, …); `undefined` for any other.
 *
 * @example
 * ```ts
 * echoContentCoding(' GZIP '); // 'gzip'
 * ```
 */
export function echoContentCoding(coding: string | null | undefined): string | undefined {
  if (typeof coding !== 'string') return undefined;
  const lower = coding.trim().toLowerCase();
  return CONTENT_CODINGS.has(lower) ? lower : undefined;
}
