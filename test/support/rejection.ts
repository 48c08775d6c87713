/**
 * What a promise rejected with, for tests that look into a refusal: its code, status,
 * fields and cause. A promise that resolves fails the test.
 */

/** What `promise` rejected with; throws when it resolves. */
export async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection, and the promise resolved');
}

/**
 * What `promise` rejected with, an instance of `type` (`KeysetError`, `AuthenticationError`…);
 * throws when it resolves or rejects with anything else, that error as the cause.
 */
export async function rejectionOf<T>(promise: Promise<unknown>, type: abstract new (...args: never[]) => T): Promise<T> {
  const error = await rejection(promise);
  if (error instanceof type) return error;
  throw new Error(`expected a ${type.name}, got ${String(error)}`, { cause: error });
}
