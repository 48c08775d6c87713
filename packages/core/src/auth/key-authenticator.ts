/**
 * `Keyring.authenticate` and `Keyring.authorize`: the checks a request goes through, in
 * order. A key in the query string is refused before anything else (URLs are logged, so
 * the key must be rotated), then the `Authorization` header is read, the key verified
 * and checked against its IP allowlist (`authenticate`), then the endpoint's scopes
 * (`authorize`, which `authenticate` calls when given scopes).
 * @module
 */
import { KeysetError } from '../errors.ts';
import { readCredentials, singleAuthorization, type AcceptedSchemes } from './authorization-header.ts';
import { createIpAllowlistCheck } from './ip-allowlist.ts';
import type { BestEffortLog } from '../keys/internal/best-effort-log.ts';
import type { VerifiedKey } from '../keys/key-record.ts';
import type { KeyVerifier } from './key-verifier.ts';
import { createQueryCredentialFinder } from './query-credentials.ts';
import { grantsQuery, missingPermissions, type PermissionQuery } from './permission-query.ts';
import { missingScopes } from '../keys/scopes.ts';

/** The request parts authentication looks at. */
export interface AuthenticateRequest {
  /**
   * The `Authorization` header: its value, or all its values (every
   * `Authorization` line of Node's `req.rawHeaders`). More than one set of credentials is 400
   * `invalid_request` (`singleAuthorization`).
   */
  authorization: string | readonly string[] | null | undefined;
  /**
   * The `X-API-Key` header, as sent (all its values, or the one a `Headers` object joined).
   * Read as credentials when the keyring accepts `'X-API-Key'` (`schemes`); otherwise a
   * key sent here gets 401 `unsupported_auth_scheme` saying where the key goes, instead of
   * `missing_api_key`. The adapters pass it.
   */
  xApiKey?: string | readonly string[] | null | undefined;
  /** The request URL (absolute, or path and query): checked for keys in the query string. */
  url?: string | URL | null | undefined;
  /**
   * The client's IP address, for keys with an IP allowlist: the socket's peer, or what
   * `createClientAddressResolver` made of it and `X-Forwarded-For` (`createApiKeyGuard`
   * does that). Unknown (`null`/absent) fails every allowlist.
   */
  clientAddress?: string | null | undefined;
}

/** Options of `Keyring.authenticate`. */
export interface AuthenticateOptions {
  /** Scopes the endpoint requires; all must be granted. */
  scopes?: readonly string[];
  /** A permission query the endpoint requires beside `scopes` (see `PermissionQuery`). */
  permissions?: PermissionQuery;
  /** Realm for this endpoint's 401 challenge. @default the keyring's `realm` */
  realm?: string;
}

/** What `authenticate` needs from the keyring. */
export interface KeyAuthenticatorOptions {
  /** Every accepted prefix: a key of any of them in the query string is refused. */
  readonly prefixes: readonly string[];
  /** The keyring's `realm`. */
  readonly realm: string;
  /** Where keys are read from (the keyring's `schemes`). */
  readonly schemes: AcceptedSchemes;
  readonly scopeWildcards: boolean;
  readonly log: BestEffortLog;
  readonly verify: KeyVerifier['verify'];
}

/** The keyring's `authenticate` and `authorize`. Internal: not exported from the package. */
export interface KeyAuthenticator {
  authenticate(request: AuthenticateRequest, options?: AuthenticateOptions): Promise<VerifiedKey>;
  authorize(key: VerifiedKey, scopes: readonly string[] | undefined, permissions?: PermissionQuery): void;
}

const NO_OPTIONS: AuthenticateOptions = Object.freeze({});

/** Creates a keyring's `authenticate` and `authorize`. */
export function createKeyAuthenticator(options: KeyAuthenticatorOptions): KeyAuthenticator {
  const { prefixes, realm: defaultRealm, schemes, scopeWildcards, log, verify } = options;
  const findQueryCredential = createQueryCredentialFinder(prefixes);
  const wildcardOption = Object.freeze({ wildcards: scopeWildcards });
  const ipAllowed = createIpAllowlistCheck();

  async function authenticate(request: AuthenticateRequest, authOptions: AuthenticateOptions = NO_OPTIONS): Promise<VerifiedKey> {
    const { scopes, permissions, realm = defaultRealm } = authOptions;
    const url = request.url;
    if (url !== undefined && url !== null) {
      const found = findQueryCredential(typeof url === 'string' ? url : String(url));
      if (found !== undefined) {
        if (log.warns()) log.warn({ reason: 'api_key_in_query', ...(found.kind === 'named' ? { param: found.name } : {}) }, 'api key rejected');
        throw new KeysetError('api_key_in_query', {
          detail:
            found.kind === 'named'
              ? `Send the API key in the Authorization header (\`Authorization: ApiKey <key>\`), never in the URL: remove the \`${found.name}\` query parameter, and rotate the key, since URLs are logged.`
              : 'A query parameter holds an API key. Send it in the Authorization header (`Authorization: ApiKey <key>`), never in the URL, and rotate the key, since URLs are logged.',
        });
      }
    }
    const text = readCredentials(singleAuthorization(request.authorization), request.xApiKey, schemes, realm);
    const verified = verify(text, realm);
    const key = verified instanceof Promise ? await verified : verified;
    // Before scopes: from elsewhere the key is not usable at all, whatever the endpoint.
    if (key.ipAllowlist !== null) {
      const address = request.clientAddress ?? undefined;
      if (!ipAllowed(key.ipAllowlist, address)) {
        if (log.warns()) log.warn({ reason: 'ip_not_allowed', last4: key.last4, keyId: key.id, clientAddress: address ?? null }, 'api key used from an address outside its allowlist');
        throw new KeysetError('ip_not_allowed', {
          detail:
            address === undefined
              ? 'This API key may only be used from listed IP addresses, and the address of this request is not known.'
              : 'This API key may not be used from the IP address of this request.',
        });
      }
    }
    authorize(key, scopes, permissions);
    return key;
  }

  /**
   * Throws the 403 `insufficient_scope` naming what `key` lacks of `scopes` and of
   * `permissions` (both are required): a set that, once granted, lets the key in.
   */
  function authorize(key: VerifiedKey, scopes: readonly string[] | undefined, permissions?: PermissionQuery): void {
    const scopesHeld = scopes === undefined || scopes.length === 0 || grantsExactly(key.scopes, scopes);
    const queryHeld = permissions === undefined || grantsQuery(key.scopes, permissions, wildcardOption);
    if (scopesHeld && queryHeld) return;
    const missing = scopesHeld ? [] : missingScopes(key.scopes, scopes, { wildcards: scopeWildcards });
    if (!queryHeld && permissions !== undefined) {
      for (const need of missingPermissions(key.scopes, permissions, { wildcards: scopeWildcards })) if (!missing.includes(need)) missing.push(need);
    }
    if (missing.length === 0) return;
    if (log.warns()) log.warn({ reason: 'insufficient_scope', last4: key.last4, keyId: key.id, missingScopes: missing }, 'api key lacks scope');
    throw new KeysetError('insufficient_scope', {
      detail: `This API key lacks the required scope${missing.length > 1 ? 's' : ''}: ${missing.join(', ')}.`,
      extensions: { missing_scopes: missing },
    });
  }

  return { authenticate, authorize };
}

/**
 * Whether every required scope is granted as it is: the common case, answered without
 * the general check's array (a scope always covers itself, wildcards or not).
 */
function grantsExactly(granted: readonly string[], required: readonly string[]): boolean {
  for (let i = 0; i < required.length; i++) if (!granted.includes(required[i] as string)) return false;
  return true;
}
