/**
 * Entry point of `npx -y pnpm@10.34.9 start`: reads the configuration from the environment, starts the
 * orders API, and shuts it down gracefully on SIGTERM/SIGINT (stop accepting, finish
 * in-flight requests, flush `lastUsedAt`, close Redis and the database, exit 0).
 * `createOrdersApi` is exported for programmatic use and tests.
 * @module
 */
import { ConfigurationError, loadConfig } from './config.ts';
import { createOrdersApi } from './create-orders-api.ts';
import { DataDirLockedError } from './data-dir.ts';
import { createLogger } from './logger.ts';
import { isEntryPoint } from './entry-point.ts';

export { createOrdersApi } from './create-orders-api.ts';
export type { OrdersApi, OrdersApiOptions } from './create-orders-api.ts';
export { loadConfig, resolveConfig, ConfigurationError } from './config.ts';
export type { Config, ConfigInput } from './config.ts';

/** Signals this close to the first one are copies of it (see `stop`), not a second Ctrl-C. */
const REPEAT_WINDOW_MS = 1_000;

/** Runs the server until a signal; resolves the exit code. */
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
  const running = api;
  return new Promise<number>((resolve) => {
    let stoppingSince: number | undefined;
    const stop = (signal: NodeJS.Signals): void => {
      if (stoppingSince !== undefined) {
        // One Ctrl-C reaches this process twice when it runs under npm or pnpm: the
        // terminal signals the whole process group and the package manager forwards
        // its own copy. Only a signal a human sent later forces the exit.
        if (performance.now() - stoppingSince < REPEAT_WINDOW_MS) return;
        logger.warn({ signal }, 'second signal: exiting now');
        resolve(1);
        return;
      }
      stoppingSince = performance.now();
      logger.info({ signal }, 'shutting down');
      running.close().then(
        () => {
          logger.info('stopped');
          resolve(0);
        },
        (error: unknown) => {
          logger.error({ err: error }, 'shutdown failed');
          resolve(1);
        },
      );
    };
    process.on('SIGTERM', stop);
    process.on('SIGINT', stop);
  });
}


if (isEntryPoint(import.meta.url)) {
  main().then(
    (code) => process.exit(code),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}
