/**
 * Client text shown in a message, only when short. Key-shaped text is redacted first:
 * `toProblem` redacts every member anyway, but it can only find a whole key, and a cut
 * at 40 characters left `acme_live_` and 30 secret characters that no longer looked
 * like one; a mistyped key never looks like one, so long text is not shown at all.
 * @module
 */
import { redactText } from '../keys/redact-text.ts';

/**
 * `text` with key-shaped text redacted; longer than `max` characters, it is not shown at all
 * (`…(57 characters)`). Not cut: a *mistyped* key (one character dropped, or a `-` or `_`
 * typed into it) no longer looks like a key to any redaction, and any cut of it long
 * enough to help the reader would show most of its secret. Identifiers worth echoing
 * (a sort field, a status) are short; a key with its prefix never is.
 */
export function clipInput(text: string, max: number): string {
  const safe = redactText(text);
  return safe.length <= max ? safe : `…(${safe.length} characters)`;
}
