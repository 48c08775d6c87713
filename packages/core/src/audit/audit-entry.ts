/**
 * Building audit entries: who (`AuditContext`, checked), and what changed, as the before
 * and after values of a record's PUBLIC fields. The field lists below are allow-lists on
 * purpose: a field added to a stored record later (a digest, a pepper id) never reaches the
 * log unless it is named here.
 * @module
 */
import { KeysetError } from '../errors.ts';
import type { JsonValue } from '../keys/key-metadata.ts';
import type { StoredIdentity, StoredOwner, StoredSecret } from '../keys/key-store.ts';
import type { AuditAction, AuditChange, AuditEntry } from './audit-store.ts';
import { isWellFormedRequestId } from './request-id.ts';

/**
 * Who makes an administrative change, passed as the last argument of every changing method
 * of `createKeyAdmin` and `createOwnerAdmin`.
 */
export interface AuditContext {
  /**
   * Who acts: an admin key's id, `cli`, `secret-scanning`, a user name. 1-128 characters,
   * no control characters.
   * @default the admin's `actor` option
   */
  actor?: string;
  /** The id of the request that asked for the change (see `isWellFormedRequestId`). @default null */
  requestId?: string | null;
}

/** A context with both members decided. */
export interface ResolvedAuditContext {
  actor: string;
  requestId: string | null;
}

const MAX_ACTOR = 128;
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
/** An actor name as the log stores it; anything else is a 400 `invalid_request` naming `field`. */
export function validateActor(value: unknown, field = 'actor'): string {
  if (typeof value !== 'string' || value.length === 0 || value.length > MAX_ACTOR || CONTROL.test(value) || LONE_SURROGATE.test(value)) {
    throw new KeysetError('invalid_request', { detail: `\`${field}\` must be 1-${MAX_ACTOR} characters without control characters.`, extensions: { field } });
  }
  return value;
}

/** `context` checked, `defaultActor` filling a missing actor. */
export function resolveAuditContext(context: AuditContext | undefined, defaultActor: string): ResolvedAuditContext {
  if (context === undefined) return { actor: defaultActor, requestId: null };
  if (typeof context !== 'object' || context === null) {
    throw new KeysetError('invalid_request', { detail: 'The audit context must be `{ actor?, requestId? }`.', extensions: { field: 'context' } });
  }
  const actor = context.actor === undefined ? defaultActor : validateActor(context.actor);
  const { requestId = null } = context;
  if (requestId !== null && !isWellFormedRequestId(requestId)) {
    throw new KeysetError('invalid_request', {
      detail: '`requestId` must be 1-64 of A-Z a-z 0-9 . _ : - with no 8 letters and digits in a row outside a UUID.',
      extensions: { field: 'requestId' },
    });
  }
  return { actor, requestId };
}

/** A JSON copy: dates become ISO strings, `undefined` becomes `null`. */
function json(value: unknown): JsonValue {
  return value === undefined ? null : (JSON.parse(JSON.stringify(value)) as JsonValue);
}

/** The public fields of a key identity, as the log shows them. */
export function keyFields(identity: StoredIdentity, environment: string): Record<string, JsonValue> {
  return {
    name: identity.name,
    scopes: [...identity.scopes],
    environment,
    metadata: json(identity.metadata ?? {}),
    ipAllowlist: json(identity.ipAllowlist ?? null),
    rateLimits: json(identity.rateLimits ?? (identity.rateLimit === null ? null : [identity.rateLimit])),
    quota: json(identity.quota ?? null),
    ownerId: identity.ownerId ?? null,
    expiresAt: json(identity.expiresAt),
    revokedAt: json(identity.revokedAt),
    leakedAt: json(identity.leakedAt ?? null),
    leakUrl: identity.leakedAt === null || identity.leakedAt === undefined ? null : (identity.leakUrl ?? null),
  };
}

/** The secrets of a key as the log shows them: when each was made and when it ends, nothing of its text. */
export function secretFields(secrets: readonly Pick<StoredSecret, 'createdAt' | 'expiresAt'>[]): JsonValue {
  return secrets.map((s) => ({ createdAt: s.createdAt.toISOString(), expiresAt: s.expiresAt === null ? null : s.expiresAt.toISOString() }));
}

/** The public fields of an owner, as the log shows them. */
export function ownerFields(owner: StoredOwner): Record<string, JsonValue> {
  return {
    metadata: json(owner.metadata ?? {}),
    rateLimits: json(owner.rateLimits ?? null),
    quota: json(owner.quota ?? null),
    disabledAt: json(owner.disabledAt),
  };
}

/**
 * The fields whose value differs between `before` and `after` (`null` for a record that did
 * not exist before, or does not after), compared as JSON.
 */
export function changesBetween(before: Record<string, JsonValue> | null, after: Record<string, JsonValue> | null): Record<string, AuditChange> {
  const changes: Record<string, AuditChange> = {};
  for (const field of new Set([...Object.keys(before ?? {}), ...Object.keys(after ?? {})])) {
    const b = before?.[field] ?? null;
    const a = after?.[field] ?? null;
    if (JSON.stringify(b) !== JSON.stringify(a)) changes[field] = { before: b, after: a };
  }
  return changes;
}

/** A frozen entry. */
export function auditEntry(
  id: string,
  at: Date,
  context: ResolvedAuditContext,
  action: AuditAction,
  target: AuditEntry['target'],
  changes: Record<string, AuditChange>,
): AuditEntry {
  return Object.freeze({
    id,
    at,
    actor: context.actor,
    action,
    target: Object.freeze({ ...target }),
    changes: Object.freeze(changes),
    requestId: context.requestId,
  });
}
