/**
 * Entry point of `pnpm start`: reads the configuration from the environment, starts the
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
    let stopping = false;
    const stop = (signal: NodeJS.Signals): void => {
      if (stopping) {
        logger.warn({ signal }, 'second signal: exiting now');
        resolve(1);
        return;
      }
      stopping = true;
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
