export { mysqlUrl, postgresUrl, redisUrl, uniqueSchema } from './services.ts';
