/**
 * The owner schemas of the shared components (`keysetComponents()`): the owner record, its
 * create and update bodies, and the owner's quota with its refill and mode.
 * @module
 */
import type { JsonObject } from './json.ts';

/** A quota's mode in a request body: `observe` is shadow mode (see `Quota.mode`). */
const QUOTA_MODE: JsonObject = {
  type: 'string',
  enum: ['enforce', 'observe'],
  description: '`observe` (shadow mode): spent and counted as if enforced, never refusing; a request it cannot cover is served and spends nothing from it. Left out keeps the current mode (enforced for a new quota).',
};

/**
 * Owners (`createOwnerAdmin` in `@keyset/core`): the record, its create and update bodies,
 * a rate limit as keys and owners both store it, and the owner's quota with its refill.
 */
export function ownerSchemas(): Record<string, JsonObject> {
  const limit: JsonObject = { $ref: '#/components/schemas/NamedRateLimit' };
  const limits: JsonObject = { type: ['array', 'null'], items: limit, minItems: 1, maxItems: 10, description: 'Shared by all the owner\'s keys, decided with each key\'s own; shown as `owner.<name>` in the RateLimit headers.' };
  const ownerId: JsonObject = { type: 'string', pattern: '^(?!\\.\\.?$)[A-Za-z0-9_.:-]{1,128}$', description: 'Chosen by the application, e.g. its customer id.' };
  const metadata: JsonObject = { type: ['object', 'null'], description: 'A JSON object of at most 4 KiB, handed to the handler with every request of its keys.' };
  const refill: JsonObject = { $ref: '#/components/schemas/QuotaRefill' };
  const quotaInput: JsonObject = {
    type: ['object', 'null'],
    required: ['remaining'],
    additionalProperties: false,
    description: "Usage credits all the owner's keys spend from, beside each key's own: a request is admitted only if both cover its cost, and then spends from both. Null removes it.",
    properties: { remaining: { type: 'integer', minimum: 0, maximum: 1e15 }, refill, mode: QUOTA_MODE },
  };
  const quotaMode: JsonObject = {
    type: 'string',
    enum: ['enforce', 'observe'],
    description: 'Switches the current quota between enforced and observed (shadow mode) and nothing else: its count goes on. Not with `quota`; 400 without a quota.',
  };
  return {
    QuotaRefill: {
      type: ['object', 'null'],
      required: ['amount', 'interval'],
      additionalProperties: false,
      description: 'At each interval the credits are SET to `amount` (no carry-over): 00:00 UTC daily, the 1st of the month, or every N seconds. Null: a one-off budget.',
      properties: {
        amount: { type: 'integer', minimum: 1, maximum: 1e15 },
        interval: { oneOf: [{ type: 'string', enum: ['daily', 'monthly'] }, { type: 'integer', minimum: 1, maximum: 31_622_400 }] },
      },
    },
    OwnerQuota: {
      $ref: '#/components/schemas/Quota',
      description: "The owner's quota: credits as set at `setAt`, or (on one owner's record) the live count with `nextRefillAt`. Null: none.",
    },
    Quota: {
      type: ['object', 'null'],
      required: ['remaining', 'refill', 'setAt'],
      description: "A key's or an owner's usage credits: as set at `setAt`, or the live count with `nextRefillAt`. Null: none.",
      properties: {
        remaining: { type: 'integer', minimum: 0 },
        refill,
        setAt: { type: 'string', format: 'date-time' },
        nextRefillAt: { type: ['string', 'null'], format: 'date-time' },
        mode: { ...QUOTA_MODE, enum: ['observe'], description: 'Present (`observe`) for a shadow quota: counted, never refusing. Absent: enforced.' },
      },
    },
    NamedRateLimit: {
      type: 'object',
      required: ['limit', 'windowSeconds'],
      additionalProperties: false,
      properties: {
        name: { type: 'string', pattern: '^[A-Za-z0-9_.-]{1,64}$', description: 'Default `default`; a key\'s may not start with `owner.`.' },
        limit: { type: 'integer', minimum: 1 },
        windowSeconds: { type: 'number', exclusiveMinimum: 0 },
        burst: { type: 'integer', minimum: 1 },
        mode: { type: 'string', enum: ['enforce', 'observe'], description: '`observe` (shadow mode): decided and counted as if enforced, never refusing; not in the response headers. Default `enforce` (a record leaves it out).' },
      },
    },
    OwnerRecord: {
      type: 'object',
      description: 'An owner: the customer several keys belong to.',
      required: ['id', 'metadata', 'rateLimits', 'quota', 'createdAt', 'disabledAt'],
      properties: {
        id: ownerId,
        metadata: { type: 'object' },
        rateLimits: limits,
        quota: { $ref: '#/components/schemas/OwnerQuota' },
        createdAt: { type: 'string', format: 'date-time' },
        disabledAt: { type: ['string', 'null'], format: 'date-time', description: 'Set while disabled: none of its keys verifies.' },
      },
    },
    CreateOwner: {
      type: 'object',
      required: ['id'],
      additionalProperties: false,
      properties: { id: ownerId, metadata, rateLimits: limits, quota: quotaInput },
    },
    UpdateOwner: {
      type: 'object',
      additionalProperties: false,
      minProperties: 1,
      properties: {
        metadata,
        rateLimits: { ...limits, description: 'Replaces them; null removes them.' },
        quota: {
          ...quotaInput,
          required: [],
          description: 'Sets the credits from now on (null removes the quota); `refill` left out keeps the current one, `remaining` left out keeps the live count.',
        },
        quotaMode,
        disabled: { type: 'boolean', description: 'true refuses every key of the owner on every instance, before the response; false admits them again.' },
      },
    },
  };
}
