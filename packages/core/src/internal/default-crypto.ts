/**
 * Resolves the runtime's provider through the `#crypto` import condition
 * (package.json `imports`): `node:crypto` on Node, Web Crypto elsewhere.
 * @module
 */
export { defaultCrypto } from '#crypto';
