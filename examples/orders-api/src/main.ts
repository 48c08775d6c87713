/**
 * Entry point of `npx -y pnpm@10.34.9 start`: reads the configuration from the environment, starts the
 * orders API, and shuts it down gracefully on SIGTERM/SIGINT (stop accepting, finish
 * in-flight requests, flush `lastUsedAt`, close Redis and the database, exit 0).
 * `createOrdersApi` is exported for programmatic use and tests.
 * @module
 */
import { ConfigurationError, loadConfig, type Config } from './config.ts';
import { createOrdersApi } from './create-orders-api.ts';
import { DataDirLockedError } from './data-dir.ts';
import { createLogger, type Logger } from './logger.ts';
import { isEntryPoint } from './entry-point.ts';

export { createOrdersApi } from './create-orders-api.ts';
export type { OrdersApi, OrdersApiOptions } from './create-orders-api.ts';
export { loadConfig, resolveConfig, ConfigurationError } from './config.ts';
export type { Config, ConfigInput } from './config.ts';

/** Signals this close to the first one are copies of it (see `watchSignals`), not a second Ctrl-C. */
const REPEAT_WINDOW_MS = 1_000;

/**
 * SIGINT and SIGTERM, from the very start: a signal during start-up (seeding takes seconds)
 * stops the server as soon as it is up, instead of killing it mid-write. The first signal
 * resolves `stop`; a later one (a human pressing Ctrl-C again) calls `force`.
 */
function watchSignals(force: (signal: NodeJS.Signals) => void): { stop: Promise<NodeJS.Signals>; dispose(): void } {
  let firstAt: number | undefined;
  let resolveStop!: (signal: NodeJS.Signals) => void;
  const stop = new Promise<NodeJS.Signals>((resolve) => (resolveStop = resolve));
  const onSignal = (signal: NodeJS.Signals): void => {
    if (firstAt === undefined) {
      firstAt = performance.now();
      resolveStop(signal);
      return;
    }
    // One Ctrl-C reaches this process two or three times when it runs under npx, npm or
    // pnpm: the terminal signals the whole process group and each package manager
    // forwards its own copy. Only a signal a human sent later forces the exit.
    if (performance.now() - firstAt >= REPEAT_WINDOW_MS) force(signal);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return { stop, dispose: () => (process.off('SIGINT', onSignal), process.off('SIGTERM', onSignal)) };
}

/**
 * Runs the server until a signal; resolves the exit code: 0 after a clean shutdown, 1 when
 * it failed or a second signal cut it short, 78 for a bad configuration.
 */
export async function main(env: Readonly<Record<string, string | undefined>> = process.env): Promise<number> {
  let config;
  try {
    config = loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigurationError) {
      process.stderr.write(`orders-api: ${error.message}\n`);
      return 78; // EX_CONFIG
    }
    throw error;
  }
  const logger = createLogger(config.logLevel);
  let forced!: (code: number) => void;
  const forcedExit = new Promise<number>((resolve) => (forced = resolve));
  const signals = watchSignals((signal) => {
    logger.warn({ signal }, 'second signal: exiting now');
    forced(1);
  });
  try {
    return await Promise.race([forcedExit, run(config, logger, signals.stop)]);
  } finally {
    signals.dispose();
  }
}

/** Starts the API, waits for `stop`, shuts down; the exit code. */
async function run(config: Config, logger: Logger, stop: Promise<NodeJS.Signals>): Promise<number> {
  let api;
  try {
    api = await createOrdersApi({ ...config, logger });
  } catch (error) {
    if (error instanceof DataDirLockedError) {
      logger.fatal({ dataDir: config.dataDir, pid: error.pid }, `${error.message}: stop it first, or set DATA_DIR to another directory`);
    } else if (error instanceof Error && 'code' in error && error.code === 'EADDRINUSE') {
      logger.fatal(`port ${config.port} on ${config.host} is in use: stop the other server or set PORT`);
    } else {
      logger.fatal({ err: error }, 'orders API failed to start');
    }
    return 1;
  }
  const signal = await stop;
  logger.info({ signal }, 'shutting down');
  try {
    await api.close();
  } catch (error) {
    logger.error({ err: error }, 'shutdown failed');
    return 1;
  }
  logger.info('stopped');
  return 0;
}

if (isEntryPoint(import.meta.url)) {
  // `main` removes its signal handlers when it returns, and the process exits a moment
  // later. A copy of the one Ctrl-C that npx or pnpm forwards can land in between (on a
  // busy machine it arrives tens of ms late): with no handler left, Node's default action
  // kills the process by SIGINT and pnpm reports ELIFECYCLE after a clean shutdown. These
  // handlers ignore such a copy so the process ends with main's exit code; while main
  // runs, its own handlers decide (graceful stop, or a later signal forcing the exit).
  const ignoreLateCopy = (): void => {};
  process.on('SIGINT', ignoreLateCopy);
  process.on('SIGTERM', ignoreLateCopy);
  main().then(
    (code) => process.exit(code),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}
