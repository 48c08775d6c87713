/**
 * What `lookup` answers for a function, asked again only when a different function comes.
 * The hot path reads variants off methods — a method's synchronous twin
 * (`maybeSyncVariant`), the memory store's single-pair `decide` — as symbol-keyed
 * properties; read on every request, such a load meets many functions and goes
 * megamorphic. A method replaced after start-up is looked up afresh on its first call.
 * @module
 */

/** `lookup`, remembered for the function it was last asked about (starting with `initial`). */
export function rememberLast<F, R>(lookup: (fn: F) => R, initial: F): (fn: F) => R {
  let known = initial;
  let answer = lookup(initial);
  return (fn) => {
    if (fn !== known) {
      known = fn;
      answer = lookup(fn);
    }
    return answer;
  };
}
