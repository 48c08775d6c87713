/**
 * Node's documented key for a value's own `util.inspect` output (`util.inspect.custom`),
 * which keyset sets on values that hold key text so that `console.log` shows it redacted.
 * Read through the global symbol registry, as Node documents, so that core imports no
 * `node:util` and runs on any runtime.
 */
export const NODE_INSPECT: unique symbol = Symbol.for('nodejs.util.inspect.custom') as never;
