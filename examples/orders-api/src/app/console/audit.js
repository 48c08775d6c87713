// A key's audit trail: its most recent entries, newest first, each with when, what, who
// and each change before → after. "Who" is a key's name beside its id when the actor is a
// key (an admin key acting through the API), else the actor as recorded (`cli`, …).

import { $, el } from './dom.js';
import { count, problemText, when } from './format.js';

/** How many entries the trail shows. */
const LIMIT = 50;
const KEY_ID = /^key_[0-9A-Za-z]{22}$/;

/** The audit trail; `findKey(id)` is a loaded key record, or undefined. */
export function createAuditTrail({ api, findKey }) {
  /** Names of actor keys not in the loaded list, each read once (until sign-out). */
  const names = new Map();

  function actorName(actor) {
    const loaded = findKey(actor);
    if (loaded !== undefined) return loaded.name;
    if (!KEY_ID.test(actor)) return undefined;
    if (!names.has(actor)) names.set(actor, api.call('GET', `/api/keys/${encodeURIComponent(actor)}`).then((reply) => (reply.ok ? reply.data.name : undefined)));
    return names.get(actor);
  }

  async function entry(item) {
    const name = await actorName(String(item.actor));
    const by = name === undefined ? String(item.actor) : `"${name}" (${item.actor})`;
    const node = el('li', {}, el('span', { class: 'when' }, when(item.at)), ' ', el('strong', {}, String(item.action)), ` by ${by}`);
    const changes = Object.entries(item.changes ?? {});
    if (changes.length > 0) {
      node.append(el('ul', {}, ...changes.map(([field, change]) => el('li', {}, `${field}: ${JSON.stringify(change?.before ?? null)} → ${JSON.stringify(change?.after ?? null)}`))));
    }
    return node;
  }

  function summary(items, more) {
    if (items.length === 0) return 'Nothing recorded yet.';
    if (more) return `The ${count(items.length, 'most recent entry', 'most recent entries')}, newest first.`;
    return items.length === 1 ? '1 entry.' : `${items.length} entries, newest first.`;
  }

  return Object.freeze({
    /** Shows the trail of the key `keyId`. */
    async load(keyId) {
      const reply = await api.call('GET', `/api/audit?target=${encodeURIComponent(keyId)}&limit=${LIMIT}`);
      const list = $('audit-list');
      if (!reply.ok) {
        list.replaceChildren();
        // A 404: a server without the audit route.
        $('audit-summary').textContent = reply.status === 404 ? 'Audit trail not available on this server.' : `The audit trail could not be read: ${problemText(reply)}`;
        return;
      }
      const items = reply.data.items;
      list.replaceChildren(...(await Promise.all(items.map(entry))));
      $('audit-summary').textContent = summary(items, Boolean(reply.data.nextCursor));
    },
    clear() {
      names.clear();
      $('audit-list').replaceChildren();
    },
  });
}
