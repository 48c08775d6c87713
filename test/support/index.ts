export { postgresUrl, redisUrl, uniqueSchema } from './services.ts';
