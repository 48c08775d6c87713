/**
 * Client text shown in a message, shortened. Key-shaped text is redacted before the cut:
 * `toProblem` redacts every member anyway, but it can only find a whole key, and a cut
 * at 40 characters leaves `acme_live_` and 30 secret characters that no longer look
 * like one.
 * @module
 */
import { redactText } from '../keys/redact-text.ts';

/** `text` with key-shaped text redacted, then cut to at most `max` characters (`…` marks a cut). */
export function clipInput(text: string, max: number): string {
  const safe = redactText(text);
  return safe.length <= max ? safe : `${safe.slice(0, max)}…`;
}
