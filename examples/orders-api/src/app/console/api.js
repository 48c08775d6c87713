// The admin API, called with the admin key the operator pasted. The key lives in this
// closure and in this tab's sessionStorage only: never in a URL, a cookie or a log line.

import { problemText } from './format.js';

/** Where the admin key is kept: this tab only, gone when it closes. */
const KEY_STORAGE = 'keyset-console:admin-key';
/** Lists are loaded page by page (the API's largest page) for the search boxes. */
const PAGE_SIZE = 100;
/** Stop loading after this many pages: the search then covers the newest 2,000. */
const MAX_PAGES = 20;

/** Thrown when the API refused the admin key: the page is back at the key form, nothing more to report. */
export class SignedOut extends Error {}

/**
 * The API client. `onRefused(reply)` runs when the key is refused (401): revoked or
 * mistyped, the page goes back to the key form.
 */
export function createApi({ onRefused }) {
  let key = null;

  /** One call with the admin key: `{ status, ok, data }`, `data` the answer's JSON (or nothing). */
  async function call(method, path, body) {
    const headers = { authorization: `ApiKey ${key}`, accept: 'application/json, application/problem+json' };
    if (body !== undefined) headers['content-type'] = 'application/json';
    const response = await fetch(path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      // Answers may hold a new key: nothing of them goes to the HTTP cache.
      cache: 'no-store',
      credentials: 'omit',
      redirect: 'error',
    });
    const text = await response.text();
    let data;
    try {
      data = text === '' ? undefined : JSON.parse(text);
    } catch {
      data = undefined;
    }
    const reply = { status: response.status, ok: response.ok, data };
    if (response.status === 401) {
      onRefused(reply);
      throw new SignedOut();
    }
    return reply;
  }

  /** Every page of a list, up to MAX_PAGES; `truncated` when more remained. */
  async function loadAll(path) {
    const items = [];
    let url = `${path}?limit=${PAGE_SIZE}`;
    for (let page = 0; page < MAX_PAGES; page += 1) {
      const reply = await call('GET', url);
      if (!reply.ok) throw new Error(problemText(reply));
      items.push(...reply.data.items);
      if (!reply.data.nextCursor) return { items, truncated: false };
      url = `${path}?limit=${PAGE_SIZE}&cursor=${encodeURIComponent(reply.data.nextCursor)}`;
    }
    return { items, truncated: true };
  }

  return Object.freeze({
    call,
    loadAll,
    /** The key kept from an earlier visit of this tab, or null. */
    savedKey: () => sessionStorage.getItem(KEY_STORAGE),
    /** Uses `next` from now on; kept in the tab once `remember()` is called (after it proved good). */
    use(next) {
      key = next;
    },
    remember: () => sessionStorage.setItem(KEY_STORAGE, key),
    forget() {
      key = null;
      sessionStorage.removeItem(KEY_STORAGE);
    },
  });
}
