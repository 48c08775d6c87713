// The keys table: every key loaded (up to the API client's page cap) and filtered here as
// the operator types, by name, id, owner or last 4 characters.

import { $, el } from './dom.js';
import { count, keyState, when } from './format.js';

function matches(record, query) {
  if (query === '') return true;
  const text = [record.name, record.id, record.ownerId ?? '', ...record.secrets.map((secret) => secret.last4)].join('\n').toLowerCase();
  return text.includes(query);
}

/** The keys table; `openKey(id)` opens a key's detail when its name is pressed. */
export function createKeysList({ api, run, openKey }) {
  let records = [];
  let truncated = false;

  function render() {
    const query = $('key-search').value.trim().toLowerCase();
    const shown = records.filter((record) => matches(record, query));
    const rows = shown.map((record) => {
      const open = el('button', { type: 'button', class: 'link' }, record.name);
      open.addEventListener('click', () => void run(() => openKey(record.id)));
      const cells = [record.scopes.join(', '), record.ownerId ?? '—', keyState(record), when(record.lastUsedAt)];
      return el('tr', {}, el('td', {}, open), el('td', { class: 'mono' }, record.id), ...cells.map((text) => el('td', {}, text)));
    });
    $('keys-table').tBodies[0].replaceChildren(...rows);
    const more = truncated ? ` (the newest ${records.length} are searched)` : '';
    $('keys-summary').textContent = `${shown.length} of ${count(records.length, 'key')} shown${more}.`;
  }

  return Object.freeze({
    render,
    async load() {
      ({ items: records, truncated } = await api.loadAll('/api/keys'));
      render();
    },
    /** How many keys are loaded. */
    size: () => records.length,
    /** The loaded key with this id, or undefined (not loaded, or no key). */
    find: (id) => records.find((record) => record.id === id),
    /** Shows the keys matching `text`, with the focus in the search box. */
    search(text) {
      const box = $('key-search');
      box.value = text;
      render();
      box.focus();
    },
    clear() {
      records = [];
      $('keys-table').tBodies[0].replaceChildren();
    },
  });
}
