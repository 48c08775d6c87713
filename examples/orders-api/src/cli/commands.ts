/**
 * The key CLI's commands: each checks its arguments and flags now (a `UsageError` exits 2
 * before the database opens) and returns the action to run once it is open.
 * @module
 */
import { createKeyAdmin, type KeyRecord } from '@keyset/core';
import { MAX_OVERLAP_SECONDS, SCOPES, createKeyAdminHandlers, parseIssueBody } from '../app/keys-admin.ts';
import { createUsageAdminHandlers, usageRange } from '../app/usage-admin.ts';
import { formatRecord, formatTable } from '../keys/key-table.ts';
import { formatUsage } from '../keys/usage-table.ts';
import type { KeyServices } from '../keys/key-services.ts';
import { attributesFromFlags, CLI_AUDIT, expectArgs, limitsFromFlags, parseDuration, quotaLine, UsageError, walkAll, type CliFlags, type Print } from './flags.ts';
import { ownersAction } from './owner-commands.ts';
import { rolesAction } from './role-commands.ts';

/** `command` with its arguments `rest` and `values` → the action to run on the open database. */
export function commandAction(command: string, rest: readonly string[], values: CliFlags, print: Print): (keys: KeyServices) => Promise<void> {
  switch (command) {
    case 'create': {
      expectArgs(rest, 0, 'create');
      const body: Record<string, unknown> = { name: values.name, scopes: values.scopes?.split(',').map((s) => s.trim()).filter(Boolean) };
      if (values.name === undefined) throw new UsageError('create needs --name <name>');
      if (values.scopes === undefined) throw new UsageError(`create needs --scopes <scope,...> (${SCOPES.join(', ')})`);
      Object.assign(body, limitsFromFlags(values, false));
      if (values.expires !== undefined) body.expiresAt = values.expires;
      Object.assign(body, attributesFromFlags(values, false));
      if (values.owner !== undefined) body.ownerId = values.owner;
      const input = parseIssueBody(body);
      return async ({ keyring }) => {
        const { key, record } = await createKeyAdmin(keyring).issue(input, CLI_AUDIT);
        print(
          { key, ...record },
          `Created key ${record.id} "${record.name}" (${record.scopes.join(', ')}).\n\n  ${key}\n\n` +
            'Store it now: it is not kept anywhere and cannot be shown again.\n',
        );
      };
    }
    case 'list':
      expectArgs(rest, 0, 'list');
      return async ({ keyring }) => {
        const records = await walkAll<KeyRecord>('cli list', (plan) => createKeyAdmin(keyring).list(plan));
        print(records, records.length === 0 ? 'No keys.\n' : formatTable(records));
      };
    case 'show': {
      const id = expectArgs(rest, 1, 'show <id>');
      return async ({ keyring, limiter }) => {
        const record = await createKeyAdmin(keyring).get(id);
        const shown = (await createKeyAdminHandlers({ keyring, limiter }).get(id)).body;
        print(shown, formatRecord(record) + quotaLine(shown));
      };
    }
    case 'limits': {
      const id = expectArgs(rest, 1, 'limits <id> [--rate …] [--quota …] [--refill …] [--mode …] [--quota-mode …]');
      const body = limitsFromFlags({ ...values, quotaMode: values['quota-mode'] }, true);
      if (Object.keys(body).length === 0) throw new UsageError('limits needs --rate, --quota, --refill and/or --quota-mode');
      return async ({ keyring, limiter }) => {
        const { body: shown } = await createKeyAdminHandlers({ keyring, limiter }).updateLimits(id, body, CLI_AUDIT);
        print(shown, `Updated the limits of key ${id}.\n${quotaLine(shown)}`);
      };
    }
    case 'update': {
      const id = expectArgs(rest, 1, 'update <id> [--metadata …] [--ip-allowlist …]');
      const body = attributesFromFlags(values, true);
      if (Object.keys(body).length === 0) throw new UsageError('update needs --metadata and/or --ip-allowlist');
      return async ({ keyring, limiter }) => {
        const { body: shown } = await createKeyAdminHandlers({ keyring, limiter }).update(id, body, CLI_AUDIT);
        print(shown, `Updated key ${id}.\n${formatRecord(shown as KeyRecord)}`);
      };
    }
    case 'rotate': {
      const id = expectArgs(rest, 1, 'rotate <id> --overlap <duration>');
      if (values.overlap === undefined) throw new UsageError('rotate needs --overlap <duration>, e.g. --overlap 1h (0 ends the old secret at once)');
      const overlapSeconds = parseDuration(values.overlap);
      if (overlapSeconds === undefined || overlapSeconds > MAX_OVERLAP_SECONDS) {
        throw new UsageError(`--overlap must be seconds or 30s/15m/1h/7d, at most 30 days, got "${values.overlap}"`);
      }
      return async ({ keyring }) => {
        const { key, record } = await createKeyAdmin(keyring).rotate(id, { overlapSeconds }, CLI_AUDIT);
        const until = new Date(Date.now() + overlapSeconds * 1000).toISOString();
        print(
          { key, ...record },
          `Rotated key ${record.id} "${record.name}". New secret:\n\n  ${key}\n\n` +
            (overlapSeconds === 0 ? 'The old secret stopped working now.\n' : `The old secret keeps working until about ${until}.\n`),
        );
      };
    }
    case 'peppers':
      expectArgs(rest, 0, 'peppers');
      return async ({ keyring }) => {
        const counts = await createKeyAdmin(keyring).pepperCounts();
        const name = (pepper: number | null): string => (pepper === null ? 'not configured' : pepper === 0 ? 'KEY_PEPPERS 1 (newest)' : `KEY_PEPPERS ${pepper + 1}`);
        const lines = counts.map(({ pepperId, pepper, count }) => `${(pepperId ?? '(no id)').padEnd(14)}${name(pepper).padEnd(24)}${count} live key${count === 1 ? '' : 's'}\n`);
        print(counts, `${'PEPPER ID'.padEnd(14)}${'PEPPER'.padEnd(24)}KEYS\n${lines.join('')}`);
      };
    case 'revoke': {
      const id = expectArgs(rest, 1, 'revoke <id>');
      return async ({ keyring }) => {
        await createKeyAdmin(keyring).revoke(id, CLI_AUDIT);
        print({ id, revoked: true }, `Revoked key ${id}.\n`);
      };
    }
    case 'usage': {
      const id = expectArgs(rest, 1, 'usage <id> [--from <time>] [--to <time>] [--interval minute|hour|day]');
      const query = new URLSearchParams();
      for (const name of ['from', 'to', 'interval'] as const) if (values[name] !== undefined) query.set(name, values[name]);
      // Checked now, like every flag: a bad one exits 2 before the database opens.
      usageRange(query, Date.now());
      return async ({ keyring, usage }) => {
        const { body } = await createUsageAdminHandlers({ keyring, store: usage.store }).key(id, query);
        print(body, formatUsage(body as Parameters<typeof formatUsage>[0]));
      };
    }
    case 'owners':
      return ownersAction(rest, values, print);
    case 'roles':
      return rolesAction(rest, values, print);
    default:
      throw new UsageError(`unknown command "${command}"`);
  }
}
