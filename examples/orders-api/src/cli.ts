/**
 * `npx -y pnpm@10.34.9 keys …` (repository root): the operator's key CLI. Works on the same database as the server
 * (`DATABASE_URL`, or the embedded PGlite in `DATA_DIR`). PGlite is single-process: while
 * the server runs on `DATA_DIR`, stop it or use the admin HTTP routes instead.
 *
 * Exit codes: 0 done; 1 failed (unknown key id, database error); 2 usage error;
 * 3 `DATA_DIR` is held by a running server; 78 bad configuration.
 * @module
 */
import { createKeyAdmin, createOwnerAdmin, createRoleAdmin, type HeldRoles, type RoleRecord, createPaginator, isKeysetError, keyListSort, type AuditContext, type KeyAdmin, type KeyRecord, type OwnerRecord, type PagePlan } from '@keyset/core';
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { PAGE_LIMITS } from './app/create-app.ts';
import { MAX_OVERLAP_SECONDS, SCOPES, createKeyAdminHandlers, parseIssueBody } from './app/keys-admin.ts';
import { createOwnerAdminHandlers } from './app/owners-admin.ts';
import { createRoleAdminHandlers } from './app/roles-admin.ts';
import { createUsageAdminHandlers, usageRange } from './app/usage-admin.ts';
import { ConfigurationError, loadConfig, parseRate, type Config } from './config.ts';
import { DataDirLockedError } from './data-dir.ts';
import { openStorage } from './db/open-storage.ts';
import { formatRecord, formatTable } from './keys/key-table.ts';
import { formatUsage } from './keys/usage-table.ts';
import { createKeyServices, type KeyServices } from './keys/key-services.ts';
import { createLogger } from './logger.ts';
import { isEntryPoint } from './entry-point.ts';

/** Every change the CLI makes is audited as made by `cli` (docs/audit.md). */
const CLI_AUDIT: AuditContext = Object.freeze({ actor: 'cli' });

export const HELP = `Usage: npx -y pnpm@10.34.9 keys <command> [options]
       (from the repository root; --silent before "keys" leaves only the CLI's
       own output on stdout: npx -y pnpm@10.34.9 --silent keys list --json)

Manage the orders API's keys in its database (DATABASE_URL, or the embedded
PGlite database in DATA_DIR; stop the server first when it uses PGlite).

Commands:
  create --name <name> --scopes <scope,...> [--rate <n>/<window>[,...]]
         [--quota <credits>] [--refill <amount>/<interval>] [--expires <time>]
         [--metadata <json object>] [--ip-allowlist <cidr,...>] [--owner <owner id>]
        Issue a key (of an owner made with "owners create"). Scopes: ${SCOPES.join(', ')}.
        --rate 10/1s, 600/1m, 10000/1h (default: the server's RATE_LIMIT);
               several at once: --rate 10/1s,10000/1d (all must admit a request).
        --quota 1000: credits; a report costs 5, a page of orders 1 (default: none).
        --refill 1000/monthly, 100/daily or 50/3600s: credits are SET to the
               amount at 00:00 UTC each day / on the 1st of each month / every N s.
        --expires 2030-01-31T00:00:00Z (default: never).
        --metadata '{"tenant":"t_42"}' (returned on every verification; at most 4 KiB).
        --ip-allowlist 203.0.113.0/24,2001:db8::/32 (default: any address).
        The key is printed once; it is not stored and cannot be shown again.
  limits <id> [--rate <n>/<window>[,...] | --rate default] [--quota <credits> | --quota none]
         [--refill <amount>/<interval> | --refill none] [--mode observe|enforce]
         [--quota-mode observe|enforce]
        Change a key's rate limits, remaining credits and refill; the rest is kept
        (--refill alone keeps the credits left). Applies to the next request.
        --mode observe: the --rate limits are observed (shadow mode): counted as
               if enforced, never refusing (usage shows would_refuse_*).
        --quota-mode observe|enforce: with --quota, the new quota's mode; alone,
               switches the current quota and keeps its count.
  update <id> [--metadata <json object> | --metadata none]
         [--ip-allowlist <cidr,...> | --ip-allowlist none]
        Replace a key's metadata and/or IP allowlist (none empties it); the rest
        is kept. Running servers see it on the next request with REDIS_URL, else
        when their cached copy expires (30 s).
  list                     List every key, newest first (never a secret).
  show <id>                One key's record, with its live credits left.
  rotate <id> --overlap <duration>
        Issue a new secret; the old one keeps working for the overlap:
        seconds (3600) or 30s, 15m, 1h, 7d; 0 stops it at once (leaked key).
  revoke <id>              End every secret of the key now.
  usage <id> [--from <time>] [--to <time>] [--interval minute|hour|day]
        Requests per outcome and credits spent, per bucket (default: hour;
        without --from, the last 60 minutes, 24 hours or 30 days). Times as
        2030-01-31T00:00:00Z. Running servers write their counts every
        USAGE_FLUSH_MS (5 s).
  peppers                  Live keys per pepper (KEY_PEPPERS, newest first): each
        used key moves to the first; drop an old pepper once it has 0 keys.
  owners create <owner id> [--rate <n>/<window>[,...]] [--metadata <json object>]
         [--quota <credits>] [--refill <amount>/<interval>]
        Create an owner (your customer id): its rate limits and quota are shared
        by all its keys and apply beside each key's own (a request spends from
        both quotas, or from neither).
  owners list | owners show <owner id> | owners keys <owner id>
        Every owner, newest first; one owner; the owner's keys.
  owners update <owner id> [--rate … | --rate none] [--metadata … | --metadata none]
         [--quota <credits> | --quota none] [--refill <amount>/<interval> | --refill none]
         [--mode observe|enforce] [--quota-mode observe|enforce] [--disable | --enable]
        Change an owner (--refill alone keeps the credits left); --disable refuses all its keys (every server, at once,
        with REDIS_URL) until --enable.
  owners delete <owner id> Delete the owner and revoke all its keys.
  roles create <name> --permissions <scope,...> [--description <text>]
        Create a role: permissions (scopes) under a name. A key holds its own
        scopes, its roles' permissions and its owner's roles' permissions.
  roles list | roles show <name>
  roles update <name> [--permissions <scope,...>] [--description <text>]
  roles delete <name>      Delete the role and take it from every key and owner.
  roles key <key id> [--set <role,...> | --set none]
  roles owner <owner id> [--set <role,...> | --set none]
        Show (or, with --set, replace) the roles of a key or an owner, and the
        permissions they come to. Every role change reaches running servers at
        once with REDIS_URL, else when their cached copy expires (30 s).

Options:
  --json                   Machine-readable output on stdout.
  -h, --help               This text.

Environment: DATABASE_URL, DATA_DIR, KEY_PREFIX, KEY_PEPPER or KEY_PEPPERS, REDIS_URL (same
values as the server; with REDIS_URL, revocations reach running servers at once).

Exit codes: 0 done, 1 failed, 2 usage error or a refused value, 3 DATA_DIR
held by a running server, 78 bad configuration.
`;

/** Where the CLI writes; a process's streams by default. */
export interface CliIo {
  env: Readonly<Record<string, string | undefined>>;
  out: (text: string) => void;
  err: (text: string) => void;
}

class UsageError extends Error {}

const DURATION_UNITS: Readonly<Record<string, number>> = { s: 1, m: 60, h: 3600, d: 86_400 };

/** `3600`, `30s`, `15m`, `1h`, `7d` → seconds, or `undefined`. */
export function parseDuration(text: string): number | undefined {
  const match = /^(0|[1-9][0-9]{0,9})([smhd])?$/.exec(text.trim());
  if (!match) return undefined;
  return Number(match[1]) * (DURATION_UNITS[match[2] ?? 's'] ?? 1);
}

/**
 * Runs the CLI with `argv` (arguments after the script) and resolves the exit code.
 *
 * @example
 * ```ts
 * const code = await runCli(['list', '--json'], { env: process.env, out: console.log, err: console.error });
 * ```
 */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: true,
      strict: true,
      options: {
        name: { type: 'string' },
        scopes: { type: 'string' },
        rate: { type: 'string' },
        expires: { type: 'string' },
        metadata: { type: 'string' },
        'ip-allowlist': { type: 'string' },
        overlap: { type: 'string' },
        quota: { type: 'string' },
        refill: { type: 'string' },
        mode: { type: 'string' },
        'quota-mode': { type: 'string' },
        owner: { type: 'string' },
        from: { type: 'string' },
        to: { type: 'string' },
        interval: { type: 'string' },
        permissions: { type: 'string' },
        description: { type: 'string' },
        set: { type: 'string' },
        disable: { type: 'boolean', default: false },
        enable: { type: 'boolean', default: false },
        json: { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h', default: false },
      },
    });
  } catch (error) {
    io.err(`${(error as Error).message}\n\n${HELP}`);
    return 2;
  }
  const { values, positionals } = parsed;
  const [command, ...rest] = positionals;
  if (values.help || command === undefined || command === 'help') {
    (command === undefined && !values.help ? io.err : io.out)(HELP);
    return command === undefined && !values.help ? 2 : 0;
  }

  let config: Config;
  try {
    config = loadConfig(io.env);
  } catch (error) {
    if (error instanceof ConfigurationError) {
      io.err(`${error.message}\n`);
      return 78;
    }
    throw error;
  }

  let action: (keys: KeyServices) => Promise<void>;
  const print = (json: unknown, human: string): void => io.out(values.json ? `${JSON.stringify(json, null, 2)}\n` : human);
  try {
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
        action = async ({ keyring }) => {
          const { key, record } = await createKeyAdmin(keyring).issue(input, CLI_AUDIT);
          print(
            { key, ...record },
            `Created key ${record.id} "${record.name}" (${record.scopes.join(', ')}).\n\n  ${key}\n\n` +
              'Store it now: it is not kept anywhere and cannot be shown again.\n',
          );
        };
        break;
      }
      case 'list':
        expectArgs(rest, 0, 'list');
        action = async ({ keyring }) => {
          const records = await listAll(createKeyAdmin(keyring));
          print(records, records.length === 0 ? 'No keys.\n' : formatTable(records));
        };
        break;
      case 'show': {
        const id = expectArgs(rest, 1, 'show <id>');
        action = async ({ keyring, limiter }) => {
          const record = await createKeyAdmin(keyring).get(id);
          const shown = (await createKeyAdminHandlers({ keyring, limiter }).get(id)).body;
          print(shown, formatRecord(record) + quotaLine(shown));
        };
        break;
      }
      case 'limits': {
        const id = expectArgs(rest, 1, 'limits <id> [--rate …] [--quota …] [--refill …] [--mode …] [--quota-mode …]');
        const body = limitsFromFlags({ ...values, quotaMode: values['quota-mode'] }, true);
        if (Object.keys(body).length === 0) throw new UsageError('limits needs --rate, --quota, --refill and/or --quota-mode');
        action = async ({ keyring, limiter }) => {
          const { body: shown } = await createKeyAdminHandlers({ keyring, limiter }).updateLimits(id, body, CLI_AUDIT);
          print(shown, `Updated the limits of key ${id}.\n${quotaLine(shown)}`);
        };
        break;
      }
      case 'update': {
        const id = expectArgs(rest, 1, 'update <id> [--metadata …] [--ip-allowlist …]');
        const body = attributesFromFlags(values, true);
        if (Object.keys(body).length === 0) throw new UsageError('update needs --metadata and/or --ip-allowlist');
        action = async ({ keyring, limiter }) => {
          const { body: shown } = await createKeyAdminHandlers({ keyring, limiter }).update(id, body, CLI_AUDIT);
          print(shown, `Updated key ${id}.\n${formatRecord(shown as KeyRecord)}`);
        };
        break;
      }
      case 'rotate': {
        const id = expectArgs(rest, 1, 'rotate <id> --overlap <duration>');
        if (values.overlap === undefined) throw new UsageError('rotate needs --overlap <duration>, e.g. --overlap 1h (0 ends the old secret at once)');
        const overlapSeconds = parseDuration(values.overlap);
        if (overlapSeconds === undefined || overlapSeconds > MAX_OVERLAP_SECONDS) {
          throw new UsageError(`--overlap must be seconds or 30s/15m/1h/7d, at most 30 days, got "${values.overlap}"`);
        }
        action = async ({ keyring }) => {
          const { key, record } = await createKeyAdmin(keyring).rotate(id, { overlapSeconds }, CLI_AUDIT);
          const until = new Date(Date.now() + overlapSeconds * 1000).toISOString();
          print(
            { key, ...record },
            `Rotated key ${record.id} "${record.name}". New secret:\n\n  ${key}\n\n` +
              (overlapSeconds === 0 ? 'The old secret stopped working now.\n' : `The old secret keeps working until about ${until}.\n`),
          );
        };
        break;
      }
      case 'peppers':
        expectArgs(rest, 0, 'peppers');
        action = async ({ keyring }) => {
          const counts = await createKeyAdmin(keyring).pepperCounts();
          const name = (pepper: number | null): string => (pepper === null ? 'not configured' : pepper === 0 ? 'KEY_PEPPERS 1 (newest)' : `KEY_PEPPERS ${pepper + 1}`);
          const lines = counts.map(({ pepperId, pepper, count }) => `${(pepperId ?? '(no id)').padEnd(14)}${name(pepper).padEnd(24)}${count} live key${count === 1 ? '' : 's'}\n`);
          print(counts, `${'PEPPER ID'.padEnd(14)}${'PEPPER'.padEnd(24)}KEYS\n${lines.join('')}`);
        };
        break;
      case 'revoke': {
        const id = expectArgs(rest, 1, 'revoke <id>');
        action = async ({ keyring }) => {
          await createKeyAdmin(keyring).revoke(id, CLI_AUDIT);
          print({ id, revoked: true }, `Revoked key ${id}.\n`);
        };
        break;
      }
      case 'usage': {
        const id = expectArgs(rest, 1, 'usage <id> [--from <time>] [--to <time>] [--interval minute|hour|day]');
        const query = new URLSearchParams();
        for (const name of ['from', 'to', 'interval'] as const) if (values[name] !== undefined) query.set(name, values[name]);
        // Checked now, like every flag: a bad one exits 2 before the database opens.
        usageRange(query, Date.now());
        action = async ({ keyring, usage }) => {
          const { body } = await createUsageAdminHandlers({ keyring, store: usage.store }).key(id, query);
          print(body, formatUsage(body as Parameters<typeof formatUsage>[0]));
        };
        break;
      }
      case 'owners':
        action = ownersAction(rest, values, print);
        break;
      case 'roles':
        action = rolesAction(rest, values, print);
        break;
      default:
        throw new UsageError(`unknown command "${command}"`);
    }
  } catch (error) {
    if (error instanceof UsageError) {
      io.err(`${error.message}\n\nRun \`npx -y pnpm@10.34.9 keys --help\` for usage.\n`);
      return 2;
    }
    if (isKeysetError(error)) {
      const field = error.extensions.field;
      io.err(`${error.detail}${typeof field === 'string' ? ` (${field})` : ''}\n`);
      return 2;
    }
    throw error;
  }

  const logger = createLogger(config.logLevel === 'info' ? 'warn' : config.logLevel);
  let storage;
  try {
    storage = await openStorage(config, { holder: 'cli' });
  } catch (error) {
    if (error instanceof DataDirLockedError) {
      io.err(
        `The orders API server (pid ${error.pid}) holds ${config.dataDir}: its embedded PGlite database serves one process at a time.\n` +
          'Stop the server and run this again, or use the admin HTTP routes (/api/keys) with the admin key while it runs.\n',
      );
      return 3;
    }
    io.err(`Cannot open the database: ${(error as Error).message}\n`);
    return 1;
  }
  try {
    const keys = await createKeyServices({ db: storage.db, config, logger });
    try {
      await action(keys);
      return 0;
    } finally {
      await keys.close();
    }
  } catch (error) {
    if (isKeysetError(error)) {
      // A value the keyring refuses is the caller's mistake, like a malformed flag: exit 2.
      const field = error.extensions.field;
      io.err(`${error.code === 'not_found' ? (command === 'owners' ? 'No owner with this id.' : command === 'roles' ? error.detail : 'No key with this id.') : error.detail}${error.code === 'invalid_request' && typeof field === 'string' ? ` (${field})` : ''}\n`);
      return error.code === 'invalid_request' ? 2 : 1;
    }
    io.err(`Failed: ${(error as Error).message}\n`);
    return 1;
  } finally {
    await storage.close();
  }
}

/** `owners <create|list|show|keys|update|delete> …`, checked now; the action runs once the database is open. */
function ownersAction(
  rest: readonly string[],
  values: {
    rate?: string | undefined;
    metadata?: string | undefined;
    quota?: string | undefined;
    refill?: string | undefined;
    mode?: string | undefined;
    'quota-mode'?: string | undefined;
    disable?: boolean | undefined;
    enable?: boolean | undefined;
  },
  print: (json: unknown, human: string) => void,
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

/** `roles <create|list|show|update|delete|key|owner> …`, checked now; the action runs once the database is open. */
function rolesAction(
  rest: readonly string[],
  values: { permissions?: string | undefined; description?: string | undefined; set?: string | undefined },
  print: (json: unknown, human: string) => void,
): (keys: KeyServices) => Promise<void> {
  const [sub, ...args] = rest;
  const one = (usage: string): string => {
    if (args.length !== 1) throw new UsageError(`usage: npx -y pnpm@10.34.9 keys roles ${usage}`);
    return args[0] as string;
  };
  const list = (text: string): string[] => text.split(',').map((s) => s.trim()).filter(Boolean);
  const roleLine = (r: Pick<RoleRecord, 'name' | 'permissions' | 'description'>): string => `${r.name}  ${r.permissions.length === 0 ? '(no permissions)' : r.permissions.join(', ')}${r.description === '' ? '' : `  "${r.description}"`}\n`;
  const heldLines = (h: HeldRoles, whose: string): string =>
    `${whose} ${h.id}: roles ${h.roles.length === 0 ? 'none' : h.roles.join(', ')}${h.inheritedRoles.length === 0 ? '' : `; from its owner ${h.inheritedRoles.join(', ')}`}\n  permissions ${h.permissions.length === 0 ? 'none' : h.permissions.join(', ')}\n`;
  const roleBody = (): Record<string, unknown> => ({
    ...(values.permissions === undefined ? {} : { permissions: list(values.permissions) }),
    ...(values.description === undefined ? {} : { description: values.description }),
  });
  const held = (whose: 'key' | 'owner') => {
    const id = one(`${whose} <${whose} id> [--set <role,...> | --set none]`);
    const set = values.set === undefined ? undefined : values.set === 'none' ? [] : list(values.set);
    return async ({ keyring }: KeyServices) => {
      const roles = createRoleAdmin(keyring, { actor: 'cli' });
      const result =
        whose === 'key'
          ? await (set === undefined ? roles.keyRoles(id) : roles.setKeyRoles(id, set, CLI_AUDIT))
          : await (set === undefined ? roles.ownerRoles(id) : roles.setOwnerRoles(id, set, CLI_AUDIT));
      print(result, heldLines(result, whose === 'key' ? 'Key' : 'Owner'));
    };
  };
  switch (sub) {
    case 'create': {
      const name = one('create <name> --permissions <scope,...> [--description <text>]');
      if (values.permissions === undefined) throw new UsageError('roles create needs --permissions <scope,...>');
      const body = { name, ...roleBody() };
      return async ({ keyring }) => {
        const role = (await createRoleAdminHandlers({ keyring }).create(body, CLI_AUDIT)).body as RoleRecord;
        print(role, `Created role ${roleLine(role)}`);
      };
    }
    case 'list':
      if (args.length !== 0) throw new UsageError('usage: npx -y pnpm@10.34.9 keys roles list');
      return async ({ keyring }) => {
        const roles = await createRoleAdmin(keyring).list();
        print(roles, roles.length === 0 ? 'No roles.\n' : roles.map(roleLine).join(''));
      };
    case 'show': {
      const name = one('show <name>');
      return async ({ keyring }) => {
        const role = await createRoleAdmin(keyring).get(name);
        print(role, roleLine(role));
      };
    }
    case 'update': {
      const name = one('update <name> [--permissions <scope,...>] [--description <text>]');
      const body = roleBody();
      if (Object.keys(body).length === 0) throw new UsageError('roles update needs --permissions or --description');
      return async ({ keyring }) => {
        const role = await createRoleAdmin(keyring).update(name, body, CLI_AUDIT);
        print(role, `Updated role ${roleLine(role)}`);
      };
    }
    case 'delete': {
      const name = one('delete <name>');
      return async ({ keyring }) => {
        await createRoleAdmin(keyring).delete(name, CLI_AUDIT);
        print({ name, deleted: true }, `Deleted role ${name}; no key or owner holds it any more.\n`);
      };
    }
    case 'key':
      return held('key');
    case 'owner':
      return held('owner');
    default:
      throw new UsageError(`roles needs a command: create, list, show, update, delete, key or owner${sub === undefined ? '' : ` (got "${sub}")`}`);
  }
}

/** Every record of a list, walked page by page with keyset's own cursors (newest first). */
async function walkAll<T extends { createdAt: Date; id: string }>(endpoint: string, list: (plan: PagePlan) => Promise<{ records: T[] }>): Promise<T[]> {
  const paginator = createPaginator<T>({ endpoint, sort: keyListSort, limits: PAGE_LIMITS, cursor: { secrets: [randomBytes(32).toString('base64url')] } });
  const all: T[] = [];
  let cursor: string | null = null;
  do {
    const query = new URLSearchParams({ limit: String(PAGE_LIMITS.max) });
    if (cursor !== null) query.set('cursor', cursor);
    const plan = await paginator.plan(query);
    const { records } = await list(plan);
    const { body } = await paginator.page(plan, records, { url: 'http://cli.invalid/owners' });
    all.push(...body.items);
    cursor = 'nextCursor' in body ? body.nextCursor : null;
  } while (cursor !== null);
  return all;
}

/** `--metadata` and `--ip-allowlist` as an admin body; on `update`, `none` removes either. */
function attributesFromFlags(values: { metadata?: string | undefined; 'ip-allowlist'?: string | undefined }, update: boolean): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  if (values.metadata !== undefined) {
    if (update && values.metadata === 'none') body.metadata = null;
    else {
      try {
        body.metadata = JSON.parse(values.metadata) as unknown;
      } catch {
        throw new UsageError(`--metadata must be a JSON object, e.g. '{"tenant":"t_42"}'${update ? ', or none' : ''}`);
      }
    }
  }
  const allowlist = values['ip-allowlist'];
  if (allowlist !== undefined) body.ipAllowlist = update && allowlist === 'none' ? null : allowlist.split(',').map((s) => s.trim()).filter(Boolean);
  return body;
}

const REFILL = /^([1-9][0-9]{0,14})\/(daily|monthly|([1-9][0-9]{0,7})s)$/;

/**
 * `--rate`, `--quota`, `--refill` as an admin body. `update`: `default`/`none` remove, and
 * `--refill` alone keeps the credits left. Throws `UsageError` for a malformed flag.
 */
function limitsFromFlags(
  values: { rate?: string | undefined; quota?: string | undefined; refill?: string | undefined; mode?: string | undefined; quotaMode?: string | undefined },
  update: boolean,
): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const [flag, value] of [['--mode', values.mode], ['--quota-mode', values.quotaMode]] as const) {
    if (value !== undefined && value !== 'observe' && value !== 'enforce') throw new UsageError(`${flag} must be observe or enforce, got "${value}"`);
  }
  // Enforced is the default: only `observe` is sent.
  const mode = values.mode === 'observe' ? { mode: 'observe' } : {};
  if (values.mode !== undefined && (values.rate === undefined || values.rate === 'default')) throw new UsageError('--mode applies to the limits given with --rate');
  if (values.rate !== undefined) {
    if (update && values.rate === 'default') body.rateLimits = null;
    else {
      const parts = values.rate.split(',').map((part) => part.trim());
      const rates = parts.map((part) => {
        const rate = parseRate(part);
        if (!rate) throw new UsageError(`--rate must look like 10/1s, 600/1m or 10000/1h (comma-separated for several), got "${values.rate}"`);
        return { ...rate, name: part.slice(part.indexOf('/') + 1) };
      });
      if (rates.length === 1 && !update) body.rateLimit = { limit: rates[0]!.limit, windowSeconds: rates[0]!.windowSeconds, ...mode };
      else body.rateLimits = rates.length === 1 ? [{ limit: rates[0]!.limit, windowSeconds: rates[0]!.windowSeconds, ...mode }] : rates.map((r) => ({ ...r, ...mode }));
    }
  }
  let refill: unknown;
  if (values.refill !== undefined) {
    const match = REFILL.exec(values.refill.trim());
    if (update && values.refill === 'none') refill = null;
    else if (!match) throw new UsageError(`--refill must look like 1000/monthly, 100/daily or 50/3600s, got "${values.refill}"`);
    else refill = { amount: Number(match[1]), interval: match[3] === undefined ? match[2] : Number(match[3]) };
  }
  if (values.quota !== undefined) {
    if (update && values.quota === 'none') {
      if (values.refill !== undefined) throw new UsageError('--quota none removes the quota: drop --refill');
      body.quota = null;
    } else {
      if (!/^(0|[1-9][0-9]{0,14})$/.test(values.quota)) throw new UsageError(`--quota must be a number of credits, got "${values.quota}"`);
      body.quota = { remaining: Number(values.quota), ...(refill === undefined ? {} : { refill }), ...(values.quotaMode === undefined ? {} : { mode: values.quotaMode }) };
    }
  } else if (refill !== undefined) {
    if (!update) throw new UsageError('--refill needs --quota <credits>');
    body.quota = { refill };
  }
  // With --quota <credits> the mode went into the new quota; alone, the current quota switches, its count kept.
  if (values.quotaMode !== undefined && values.quota === undefined) {
    if (!update || body.quota !== undefined) throw new UsageError('--quota-mode goes with --quota <credits>, or alone to switch the current quota');
    body.quotaMode = values.quotaMode;
  } else if (values.quotaMode !== undefined && body.quota === null) throw new UsageError('--quota none removes the quota: drop --quota-mode');
  return body;
}

/** `quota: 12 credits left (refills to 50 monthly, next 2026-02-01T00:00:00.000Z)`, or nothing. */
function quotaLine(record: unknown): string {
  const quota = (record as { quota?: { remaining: number; refill: { amount: number; interval: unknown } | null; nextRefillAt?: string | null; mode?: string } | null }).quota;
  if (quota === null || quota === undefined) return 'quota:      none\n';
  const refill = quota.refill === null ? 'no refill' : `refills to ${quota.refill.amount} ${typeof quota.refill.interval === 'number' ? `every ${quota.refill.interval}s` : String(quota.refill.interval)}, next ${quota.nextRefillAt ?? '?'}`;
  return `quota:      ${quota.remaining} credits left (${refill})${quota.mode === 'observe' ? ', observed: counted, never refusing' : ''}\n`;
}

function expectArgs(rest: readonly string[], count: 0 | 1, usage: string): string {
  if (rest.length !== count) throw new UsageError(`usage: npx -y pnpm@10.34.9 keys ${usage}`);
  return rest[0] ?? '';
}

/** Every key, newest first, walked page by page with the same paginator as `GET /api/keys`. */
async function listAll(admin: KeyAdmin): Promise<KeyRecord[]> {
  // Cursors never leave this process, so a throwaway secret is enough.
  const paginator = createPaginator<KeyRecord>({
    endpoint: 'cli list',
    sort: keyListSort,
    limits: PAGE_LIMITS,
    cursor: { secrets: [randomBytes(32).toString('base64url')] },
  });
  const all: KeyRecord[] = [];
  let cursor: string | null = null;
  do {
    const query = new URLSearchParams({ limit: String(PAGE_LIMITS.max) });
    if (cursor !== null) query.set('cursor', cursor);
    const plan = await paginator.plan(query);
    const { records } = await admin.list(plan);
    const { body } = await paginator.page(plan, records, { url: 'http://cli.invalid/keys' });
    all.push(...body.items);
    cursor = 'nextCursor' in body ? body.nextCursor : null;
  } while (cursor !== null);
  return all;
}


if (isEntryPoint(import.meta.url)) {
  runCli(process.argv.slice(2), {
    env: process.env,
    out: (text) => process.stdout.write(text),
    err: (text) => process.stderr.write(text),
  }).then(
    (code) => {
      process.exitCode = code;
    },
    (error: unknown) => {
      process.stderr.write(`${String((error as Error)?.stack ?? error)}\n`);
      process.exitCode = 1;
    },
  );
}
