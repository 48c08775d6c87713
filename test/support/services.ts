/**
 * Real PostgreSQL, Redis and MySQL/MariaDB for tests, never mocks. A test file asks for a server:
 * - the URL comes from TEST_DATABASE_URL / TEST_REDIS_URL / TEST_MYSQL_URL, or the local default;
 * - if nothing answers there, the tests skip with a message naming the variable,
 *   except under CI=true, where a missing server fails the run.
 */
import { connect } from 'node:net';

const DEFAULTS = {
  TEST_DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/test',
  TEST_REDIS_URL: 'redis://127.0.0.1:6379',
  TEST_MYSQL_URL: 'mysql://root@127.0.0.1:3306/test',
} as const;

type ServiceVariable = keyof typeof DEFAULTS;

function reachable(url: string, timeoutMs = 1500): Promise<boolean> {
  const { hostname, port } = new URL(url);
  const defaultPort = url.startsWith('redis') ? 6379 : url.startsWith('mysql') || url.startsWith('mariadb') ? 3306 : 5432;
  return new Promise((resolve) => {
    const socket = connect({ host: hostname.replace(/^\[|\]$/g, ''), port: Number(port || defaultPort) });
    const done = (ok: boolean): void => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

async function service(variable: ServiceVariable): Promise<string | undefined> {
  const url = process.env[variable] || DEFAULTS[variable];
  if (await reachable(url)) return url;
  const message = `${variable}: nothing answers at ${url}; set ${variable} to a reachable server to run these tests`;
  if (process.env.CI === 'true') throw new Error(`CI=true and ${message}`);
  console.warn(`skipping: ${message}`);
  return undefined;
}

/** PostgreSQL URL for tests, or `undefined` (tests skip) outside CI when none answers. */
export function postgresUrl(): Promise<string | undefined> {
  return service('TEST_DATABASE_URL');
}

/** Redis URL for tests, or `undefined` (tests skip) outside CI when none answers. */
export function redisUrl(): Promise<string | undefined> {
  return service('TEST_REDIS_URL');
}

/** MySQL/MariaDB URL for tests, or `undefined` (tests skip) outside CI when none answers. */
export function mysqlUrl(): Promise<string | undefined> {
  return service('TEST_MYSQL_URL');
}

/** A fresh schema name, so concurrent test files never share tables. */
export function uniqueSchema(prefix: string): string {
  return `${prefix}_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
}
