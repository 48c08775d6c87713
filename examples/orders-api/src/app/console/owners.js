// The owners table and one owner's usage. Usage is counted by owner id, so it includes
// keys of an earlier owner deleted under the same id: the note above the chart says so.

import { $, button, el, setStatus } from './dom.js';
import { count, when } from './format.js';
import { drawUsage } from './usage.js';

/** The owners table; "Show its keys" filters `keysList` by the owner's id. */
export function createOwners({ api, run, keysList }) {
  let owners = [];
  let truncated = false;
  let opened = null;

  async function loadUsage() {
    if (opened !== null) await drawUsage(api, `/api/owners/${encodeURIComponent(opened.id)}/usage`, 'owner-usage');
  }

  async function open(owner) {
    opened = owner;
    $('owner-heading').textContent = `Owner: ${owner.id}`;
    $('owner-usage-note').textContent =
      `Usage is counted by owner id: it includes the requests of every key issued for ${owner.id}, ` +
      `also keys of an earlier owner deleted under this id. This owner was created ${when(owner.createdAt)}.`;
    const section = $('owner-detail');
    section.hidden = false;
    section.focus();
    setStatus(`Owner ${owner.id} opened.`);
    await loadUsage();
  }

  function render() {
    const query = $('owner-search').value.trim().toLowerCase();
    const shown = owners.filter((owner) => query === '' || owner.id.toLowerCase().includes(query));
    const rows = shown.map((owner) => {
      const keys = button('Show its keys', () => keysList.search(owner.id), `Show the keys of ${owner.id}`);
      const usage = button('Show its usage', () => void run(() => open(owner)), `Show the usage of ${owner.id}`);
      const state = owner.disabledAt ? `disabled ${when(owner.disabledAt)}` : 'enabled';
      return el('tr', {}, el('td', { class: 'mono' }, owner.id), el('td', {}, state), el('td', {}, when(owner.createdAt)), el('td', {}, keys, ' ', usage));
    });
    $('owners-table').tBodies[0].replaceChildren(...rows);
    const more = truncated ? ` (the newest ${owners.length} are searched)` : '';
    $('owners-summary').textContent = `${shown.length} of ${count(owners.length, 'owner')} shown${more}.`;
  }

  return Object.freeze({
    async load() {
      ({ items: owners, truncated } = await api.loadAll('/api/owners'));
      render();
    },
    size: () => owners.length,
    wire() {
      $('owner-search').addEventListener('input', render);
      $('owner-usage-period').addEventListener('change', () => void run(loadUsage));
      $('reload-owner-usage').addEventListener('click', () => void run(loadUsage));
    },
    clear() {
      owners = [];
      opened = null;
      $('owners-table').tBodies[0].replaceChildren();
      $('owner-detail').hidden = true;
    },
  });
}
