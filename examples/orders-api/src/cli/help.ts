/**
 * The key CLI's usage text (`keys --help`); test/docs-commands.test.ts runs each command it
 * documents.
 * @module
 */
import { SCOPES } from '../app/keys-admin.ts';

/** What `keys --help` prints. */
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
