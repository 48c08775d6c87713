/**
 * `npx -y pnpm@10.34.9 keys …` (repository root): the operator's key CLI. Works on the same database as the server
 * (`DATABASE_URL`, or the embedded PGlite in `DATA_DIR`). PGlite is single-process: while
 * the server runs on `DATA_DIR`, stop it or use the admin HTTP routes instead.
 *
 * Exit codes: 0 done; 1 failed (unknown key id, database error); 2 usage error;
 * 3 `DATA_DIR` is held by a running server; 78 bad configuration.
 * @module
 */
import { isKeysetError } from '@keyset/core';
import { parseArgs } from 'node:util';
import { commandAction } from './cli/commands.ts';
import { CLI_OPTIONS, UsageError } from './cli/flags.ts';
import { HELP } from './cli/help.ts';
import { ConfigurationError, loadConfig, type Config } from './config.ts';
import { DataDirLockedError } from './data-dir.ts';
import { openStorage } from './db/open-storage.ts';
import { createKeyServices, type KeyServices } from './keys/key-services.ts';
import { createLogger } from './logger.ts';
import { isEntryPoint } from './entry-point.ts';

export { parseDuration } from './cli/flags.ts';
export { HELP } from './cli/help.ts';

/** Where the CLI writes; a process's streams by default. */
export interface CliIo {
  env: Readonly<Record<string, string | undefined>>;
  out: (text: string) => void;
  err: (text: string) => void;
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
      options: CLI_OPTIONS,
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

  const print = (json: unknown, human: string): void => io.out(values.json ? `${JSON.stringify(json, null, 2)}\n` : human);
  let action: (keys: KeyServices) => Promise<void>;
  try {
    action = commandAction(command, rest, values, print);
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
