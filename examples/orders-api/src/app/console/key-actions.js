// What can be done to keys: issue one, rotate or revoke the key shown. A new key is shown
// once, at the top of the page, until the operator hides it.

import { $, setStatus } from './dom.js';
import { problemText } from './format.js';

/** The key actions over `keysList` (the table) and `detail` (the key shown). */
export function createKeyActions({ api, run, keysList, detail }) {
  function showNewKey(key, message) {
    $('new-key-value').textContent = key;
    const section = $('new-key');
    section.hidden = false;
    section.focus();
    setStatus(`${message} The new key is shown once, at the top of the page.`);
  }

  function hideNewKey() {
    $('new-key-value').textContent = '';
    $('new-key').hidden = true;
  }

  async function issue(form) {
    const scopes = [...form.querySelectorAll('input[name="scopes"]:checked')].map((input) => input.value);
    const body = { name: $('issue-name').value, scopes };
    const owner = $('issue-owner').value.trim();
    if (owner !== '') body.ownerId = owner;
    const reply = await api.call('POST', '/api/keys', body);
    if (!reply.ok) {
      setStatus(`The key was not issued: ${problemText(reply)}`, 'error');
      return;
    }
    const { key, ...record } = reply.data;
    form.reset();
    await keysList.load();
    await detail.open(record.id);
    showNewKey(key, `Key ${record.name} issued.`);
  }

  async function rotate() {
    const record = detail.current();
    const overlapSeconds = Number($('rotate-overlap').value);
    const reply = await api.call('POST', `/api/keys/${encodeURIComponent(record.id)}/rotate`, { overlapSeconds });
    if (!reply.ok) {
      setStatus(`The key was not rotated: ${problemText(reply)}`, 'error');
      return;
    }
    const { key, ...rotated } = reply.data;
    detail.render(rotated);
    showNewKey(key, `Key ${rotated.name} rotated.`);
    await Promise.all([keysList.load(), detail.loadAudit()]);
  }

  async function revoke() {
    const record = detail.current();
    const reply = await api.call('DELETE', `/api/keys/${encodeURIComponent(record.id)}`);
    if (!reply.ok) {
      setStatus(`The key was not revoked: ${problemText(reply)}`, 'error');
      return;
    }
    await keysList.load();
    await detail.open(record.id);
    setStatus(`Key ${record.name} revoked: requests with it are refused from now on.`);
  }

  function wire() {
    $('issue-form').addEventListener('submit', (event) => {
      event.preventDefault();
      void run(() => issue(event.currentTarget));
    });
    $('new-key-done').addEventListener('click', () => {
      hideNewKey();
      setStatus('The new key is hidden.');
    });
    $('rotate-form').addEventListener('submit', (event) => {
      event.preventDefault();
      void run(rotate);
    });
    const dialog = $('revoke-dialog');
    $('revoke-open').addEventListener('click', () => {
      const record = detail.current();
      $('revoke-text').textContent = `Requests with key ${record.name} (${record.id}) will be refused at once. This cannot be undone.`;
      dialog.showModal();
      // The safe choice has the focus: Enter right after opening cancels.
      $('revoke-cancel').focus();
    });
    $('revoke-cancel').addEventListener('click', () => dialog.close());
    $('revoke-confirm').addEventListener('click', () => {
      dialog.close();
      void run(revoke);
    });
    // Closed either way (Escape included): the focus goes back to the button that opened it.
    dialog.addEventListener('close', () => {
      if (!$('revoke-open').disabled) $('revoke-open').focus();
      else $('key-detail').focus();
    });
  }

  return Object.freeze({ wire, hideNewKey });
}
