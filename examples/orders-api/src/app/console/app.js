// The orders API console: plain browser JavaScript in small ES modules, no build step, no
// dependency. It talks to this origin's admin routes only, with the admin key the operator
// pasted (api.js keeps it in this tab only). Each panel is a module with a
// `createX({ api, run, … })` factory owning its own data and controls: `load()`, `wire()`
// and `clear()` where it has them, so a new panel is one more module wired below.

import { createApi, SignedOut } from './api.js';
import { createAuditTrail } from './audit.js';
import { $, setStatus } from './dom.js';
import { count, problemText } from './format.js';
import { createKeyActions } from './key-actions.js';
import { createKeyDetail } from './key-detail.js';
import { createKeysList } from './keys-list.js';
import { createOwners } from './owners.js';
import { createRoles } from './roles.js';

/** Runs an action, reporting a failure in the status line. */
async function run(action) {
  try {
    await action();
  } catch (error) {
    if (error instanceof SignedOut) return;
    setStatus(`Something went wrong: ${error instanceof Error ? error.message : String(error)}`, 'error');
  }
}

/** The console, wired to the page's elements. */
function createConsole() {
  const api = createApi({
    onRefused(reply) {
      // The key was revoked or mistyped: back to the key form.
      signOut();
      setStatus(`The admin key was refused: ${problemText(reply)}`, 'error');
    },
  });
  const keysList = createKeysList({ api, run, openKey: (id) => detail.open(id) });
  const audit = createAuditTrail({ api, findKey: keysList.find });
  const detail = createKeyDetail({ api, run, audit });
  const actions = createKeyActions({ api, run, keysList, detail });
  const owners = createOwners({ api, run, keysList });
  const roles = createRoles({ api });
  const loaded = () => `${count(keysList.size(), 'key')} and ${count(owners.size(), 'owner')} loaded.`;

  async function signIn(key) {
    api.use(key);
    const reply = await api.call('GET', '/api/keys?limit=1');
    if (!reply.ok) {
      api.forget();
      setStatus(`This key cannot manage keys: ${problemText(reply)}`, 'error');
      return false;
    }
    api.remember();
    $('admin-last4').textContent = key.slice(-4);
    $('login').hidden = true;
    $('signed-in').hidden = false;
    return true;
  }

  function signOut() {
    api.forget();
    for (const panel of [keysList, detail, owners, roles]) panel.clear();
    actions.hideNewKey();
    $('signed-in').hidden = true;
    $('login').hidden = false;
    $('admin-key').focus();
  }

  /** A reload button: loads its list again and says how many were loaded. */
  const reload = (id, panel, noun) =>
    $(id).addEventListener('click', () => void run(async () => {
      await panel.load();
      setStatus(`${count(panel.size(), noun)} loaded.`);
    }));

  function wire() {
    $('login-form').addEventListener('submit', (event) => {
      event.preventDefault();
      const input = $('admin-key');
      const key = input.value.trim();
      input.value = '';
      if (key === '') return;
      void run(async () => {
        if (!(await signIn(key))) return;
        setStatus('Admin key accepted. Loading keys and owners…');
        await Promise.all([keysList.load(), owners.load(), roles.load()]);
        setStatus(`Signed in: ${loaded()}`);
        $('key-search').focus();
      });
    });
    $('forget-key').addEventListener('click', () => {
      signOut();
      setStatus('The admin key is forgotten.');
    });
    $('key-search').addEventListener('input', keysList.render);
    reload('reload-keys', keysList, 'key');
    reload('reload-owners', owners, 'owner');
    reload('reload-roles', roles, 'role');
    for (const panel of [detail, actions, owners]) panel.wire();
  }

  async function start() {
    wire();
    const saved = api.savedKey();
    if (saved === null) return void $('admin-key').focus();
    await run(async () => {
      if (!(await signIn(saved))) return;
      await Promise.all([keysList.load(), owners.load(), roles.load()]);
      setStatus(`Signed in: ${loaded()}`);
    });
  }

  return { start };
}

void createConsole().start();
