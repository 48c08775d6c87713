// The roles table: few (the server keeps at most 1000), listed whole in one answer.

import { $, el } from './dom.js';
import { count, problemText, when } from './format.js';

export function createRoles({ api }) {
  let roles = [];
  return Object.freeze({
    async load() {
      const reply = await api.call('GET', '/api/roles');
      if (!reply.ok) throw new Error(problemText(reply));
      roles = reply.data.items;
      const rows = roles.map((role) =>
        el(
          'tr',
          {},
          el('td', { class: 'mono' }, role.name),
          el('td', {}, role.permissions.length === 0 ? 'none' : role.permissions.join(', ')),
          el('td', {}, role.description === '' ? '—' : role.description),
          el('td', {}, when(role.updatedAt)),
        ),
      );
      $('roles-table').tBodies[0].replaceChildren(...rows);
      $('roles-summary').textContent = `${count(roles.length, 'role')}.`;
    },
    size: () => roles.length,
    clear() {
      roles = [];
      $('roles-table').tBodies[0].replaceChildren();
    },
  });
}
