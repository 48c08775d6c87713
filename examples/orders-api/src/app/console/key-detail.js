// One key opened: its record, its roles, its requests and its audit trail.

import { $, el, setStatus } from './dom.js';
import { describeLeak, describeLimits, describeQuota, describeRoles, describeSecrets, keyState, problemText, when } from './format.js';
import { drawUsage } from './usage.js';

/** The key detail section; `audit` is the audit trail it shows. */
export function createKeyDetail({ api, run, audit }) {
  let current = null;
  /** The key's roles (`GET /api/keys/{id}/roles`), or null when they could not be read. */
  let held = null;

  /** Shows `record`; a re-render after a rotation keeps the roles read on opening. */
  function render(record, roles = held) {
    current = record;
    held = roles;
    $('key-heading').textContent = `Key: ${record.name}`;
    const fields = [
      ['Id', record.id],
      ['State', keyState(record)],
      ['Scopes', record.scopes.join(', ') || 'none of its own'],
      ['Roles', roles === null ? 'could not be read' : describeRoles(roles)],
      ['Permissions', roles === null ? 'could not be read' : roles.permissions.join(', ') || 'none'],
      ['Environment', record.environment ?? '—'],
      ['Owner', record.ownerId ?? 'none'],
      ['Created', when(record.createdAt)],
      ['Last used', when(record.lastUsedAt)],
      ['Expires', when(record.expiresAt, 'never')],
      ['Rate limits', describeLimits(record.rateLimits)],
      ['Quota', describeQuota(record.quota)],
      ['IP allowlist', record.ipAllowlist === null ? 'any address' : record.ipAllowlist.join(', ')],
      ['Metadata', JSON.stringify(record.metadata ?? {})],
      ['Leak record', describeLeak(record)],
      ['Secrets', describeSecrets(record.secrets)],
    ];
    $('key-fields').replaceChildren(...fields.flatMap(([name, value]) => [el('dt', {}, name), el('dd', {}, value)]));
    const revoked = record.revokedAt !== null;
    $('revoke-open').disabled = revoked;
    for (const control of $('rotate-form').elements) control.disabled = revoked;
  }

  async function loadUsage() {
    if (current !== null) await drawUsage(api, `/api/keys/${encodeURIComponent(current.id)}/usage`, 'usage');
  }

  async function loadAudit() {
    if (current !== null) await audit.load(current.id);
  }

  return Object.freeze({
    render,
    loadAudit,
    /** The key shown, or null. */
    current: () => current,
    async open(id) {
      const reply = await api.call('GET', `/api/keys/${encodeURIComponent(id)}`);
      if (!reply.ok) {
        setStatus(`Could not open the key: ${problemText(reply)}`, 'error');
        return;
      }
      // Its roles and what they come to, beside the record (a failure leaves the record shown).
      const roles = await api.call('GET', `/api/keys/${encodeURIComponent(id)}/roles`);
      render(reply.data, roles.ok ? roles.data : null);
      const section = $('key-detail');
      section.hidden = false;
      section.focus();
      setStatus(`Key ${reply.data.name} opened.`);
      await Promise.all([loadUsage(), loadAudit()]);
    },
    wire() {
      $('usage-period').addEventListener('change', () => void run(loadUsage));
      $('reload-usage').addEventListener('click', () => void run(loadUsage));
    },
    clear() {
      current = null;
      held = null;
      audit.clear();
      $('key-detail').hidden = true;
    },
  });
}
