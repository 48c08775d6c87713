/**
 * `keys owners …`: an owner's create, list, show, keys, update and delete.
 * @module
 */
import { createOwnerAdmin, type KeyRecord, type OwnerRecord } from '@keyset/core';
import { createOwnerAdminHandlers } from '../app/owners-admin.ts';
import { formatTable } from '../keys/key-table.ts';
import type { KeyServices } from '../keys/key-services.ts';
import { attributesFromFlags, CLI_AUDIT, limitsFromFlags, quotaLine, UsageError, walkAll, type Print } from './flags.ts';

/** `owners <create|list|show|keys|update|delete> …`, checked now; the action runs once the database is open. */
export function ownersAction(
  rest: readonly string[],
  values: {
    rate?: string | undefined;
    metadata?: string | undefined;
    quota?: string | undefined;
    refill?: string | undefined;
    disable?: boolean | undefined;
    enable?: boolean | undefined;
    mode?: string | undefined;
    'quota-mode'?: string | undefined;
  },
  print: Print,
): (keys: KeyServices) => Promise<void> {
  const [sub, ...args] = rest;
  const one = (usage: string): string => {
    if (args.length !== 1) throw new UsageError(`usage: npx -y pnpm@10.34.9 keys owners ${usage}`);
    return args[0] as string;
  };
  const ownerLine = (o: OwnerRecord): string =>
    `${o.id}  ${o.disabledAt === null ? 'enabled ' : 'DISABLED'}  limits ${o.rateLimits === null ? 'none' : o.rateLimits.map((l) => `${l.name ?? 'default'} ${l.limit}/${l.windowSeconds}s${l.mode === 'observe' ? ' (observed)' : ''}`).join(', ')}  metadata ${JSON.stringify(o.metadata)}\n`;
  const ownerBody = (update: boolean): Record<string, unknown> => {
    const body: Record<string, unknown> = {};
    if (values.rate !== undefined) {
      if (update && values.rate === 'none') body.rateLimits = null;
      else {
        const limits = limitsFromFlags({ rate: values.rate, mode: values.mode }, false);
        body.rateLimits = limits.rateLimits ?? [limits.rateLimit];
      }
    } else if (values.mode !== undefined) throw new UsageError('--mode applies to the limits given with --rate');
    if (values.metadata !== undefined) Object.assign(body, attributesFromFlags({ metadata: values.metadata }, update));
    // --quota/--refill/--quota-mode as for a key (`limits`), without --rate.
    Object.assign(body, limitsFromFlags({ quota: values.quota, refill: values.refill, quotaMode: values['quota-mode'] }, update));
    return body;
  };
  /** The owner as the admin routes show it: the quota with its live count. */
  const shown = (keys: KeyServices) => createOwnerAdminHandlers({ keyring: keys.keyring, limiter: keys.limiter });
  switch (sub) {
    case 'create': {
      const id = one('create <owner id> [--rate …] [--metadata …] [--quota …] [--refill …]');
      const body = { id, ...ownerBody(false) };
      return async (keys) => {
        const owner = (await shown(keys).create(body, CLI_AUDIT)).body as Record<string, unknown>;
        print(owner, `Created owner ${id}.\n${ownerLine(owner as unknown as OwnerRecord)}${quotaLine(owner)}`);
      };
    }
    case 'list':
      if (args.length !== 0) throw new UsageError('usage: npx -y pnpm@10.34.9 keys owners list');
      return async ({ keyring }) => {
        const owners = await walkAll<OwnerRecord>('cli owners', (plan) => createOwnerAdmin(keyring).list(plan));
        print(owners, owners.length === 0 ? 'No owners.\n' : owners.map(ownerLine).join(''));
      };
    case 'show': {
      const id = one('show <owner id>');
      return async (keys) => {
        const owner = (await shown(keys).get(id)).body as Record<string, unknown>;
        print(owner, `${ownerLine(owner as unknown as OwnerRecord)}${quotaLine(owner)}`);
      };
    }
    case 'keys': {
      const id = one('keys <owner id>');
      return async ({ keyring }) => {
        const records = await walkAll<KeyRecord>('cli owner keys', (plan) => createOwnerAdmin(keyring).listKeys(id, plan));
        print(records, records.length === 0 ? `Owner ${id} has no keys.\n` : formatTable(records));
      };
    }
    case 'update': {
      const id = one('update <owner id> [--rate …] [--metadata …] [--quota …] [--refill …] [--disable | --enable]');
      if (values.disable === true && values.enable === true) throw new UsageError('give --disable or --enable, not both');
      const body: Record<string, unknown> = ownerBody(true);
      if (values.disable === true) body.disabled = true;
      if (values.enable === true) body.disabled = false;
      if (Object.keys(body).length === 0) throw new UsageError('owners update needs --rate, --metadata, --quota, --refill, --quota-mode, --disable or --enable');
      return async (keys) => {
        const owner = (await shown(keys).update(id, body, CLI_AUDIT)).body as Record<string, unknown>;
        print(owner, `Updated owner ${id}.\n${ownerLine(owner as unknown as OwnerRecord)}${quotaLine(owner)}`);
      };
    }
    case 'delete': {
      const id = one('delete <owner id>');
      return async ({ keyring }) => {
        await createOwnerAdmin(keyring).delete(id, CLI_AUDIT);
        print({ id, deleted: true }, `Deleted owner ${id}; its keys are revoked.\n`);
      };
    }
    default:
      throw new UsageError(`owners needs a command: create, list, show, keys, update or delete${sub === undefined ? '' : ` (got "${sub}")`}`);
  }
}
