/**
 * Duplicate member names in JSON text. RFC 8259 §4 says names SHOULD be unique and leaves
 * what a parser does with a repeated one open; `JSON.parse` keeps the last. A signed alert
 * `{"token": A, "token": B}` would then be read as B by keyset and perhaps as A by another
 * reader of the same bytes (a log pipeline, an audit copy), so such a body is refused as
 * malformed instead of guessed at. `JSON.parse` keeps no trace of the names it dropped
 * (and Node 20's reviver gets no source text), hence this pass over the text.
 * @module
 */

/**
 * A JSON string (group 1), with the colon that makes it a member name (group 2), or a
 * brace. Strings are matched whole, so braces and colons inside them are never seen as
 * structure; in text `JSON.parse` accepted, every `"` outside a string opens one.
 */
const LEXEME = /("(?:[^"\\]|\\.)*")(\s*:)?|[{}]/g;

/**
 * Whether any object in `text` names a member twice (after unescaping: `"tok\u0065n"`
 * and `"token"` are one name). `text` must be JSON that `JSON.parse` accepts.
 *
 * @example
 * ```ts
 * hasDuplicateMember('[{"token":"a","token":"b"}]'); // true
 * hasDuplicateMember('[{"token":"a"},{"token":"b"}]'); // false
 * ```
 */
export function hasDuplicateMember(text: string): boolean {
  const open: Set<string>[] = [];
  for (const [lexeme, string, colon] of text.matchAll(LEXEME)) {
    if (lexeme === '{') open.push(new Set());
    else if (lexeme === '}') open.pop();
    else if (colon !== undefined) {
      const names = open.at(-1);
      const name = JSON.parse(string as string) as string;
      if (names === undefined || names.has(name)) return true;
      names.add(name);
    }
  }
  return false;
}
