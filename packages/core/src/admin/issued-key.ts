/**
 * `IssuedKey`: what `issue` and `rotate` hand back, the one moment the key text exists
 * outside the caller's hands. It is never stored, so it must show in full exactly once.
 * @module
 */
import { NODE_INSPECT } from '../internal/node-inspect.ts';
import type { KeyRecord } from '../keys/key-record.ts';
import { redactKey } from '../redaction/redact-key.ts';

/** A new key and its record. `key` is shown once and never again: it is not stored. */
export interface IssuedKey {
  key: string;
  record: KeyRecord;
}

/**
 * `{ key, record }` whose `console.log`/`inspect` shows the key as `…abcd`. `JSON.stringify`
 * keeps the key on purpose: the issuing response is the one place it must appear.
 */
export function issuedKey(key: string, record: KeyRecord): IssuedKey {
  const result: IssuedKey = { key, record };
  Object.defineProperty(result, NODE_INSPECT, {
    value: (_depth: unknown, options: unknown, inspect?: (value: unknown, options: unknown) => string) => {
      const shown = { key: redactKey(key), record };
      return typeof inspect === 'function' ? `IssuedKey ${inspect(shown, options)}` : shown;
    },
  });
  return result;
}
