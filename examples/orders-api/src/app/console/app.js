// The orders API console: plain browser JavaScript (an ES module), no build step, no
// dependency. It talks to this origin's admin routes only, with the admin key the operator
// pasted, kept in this tab's sessionStorage (never in a URL, a cookie or a log line).
// Every text the API returns (names, metadata, leak URLs, audit changes) is written with
// textContent / createTextNode, never parsed as markup; the server's Content-Security-Policy
// allows no inline script, so even a slip would not run.

/** Where the admin key is kept: this tab only, gone when it closes. */
const KEY_STORAGE = 'keyset-console:admin-key';
/** Keys and owners are loaded page by page (the API's largest page) for the search box. */
const PAGE_SIZE = 100;
/** Stop loading after this many pages: the search then covers the newest 2,000. */
const MAX_PAGES = 20;
const SVG = 'http://www.w3.org/2000/svg';
const DAY_MS = 86_400_000;

/** Thrown when the API refused the admin key: the page is back at the key form, nothing more to report. */
class SignedOut extends Error {}

const $ = (id) => {
  const node = document.getElementById(id);
  if (node === null) throw new Error(`the page has no #${id}`);
  return node;
};

/** An element with attributes and children; a string child becomes a text node. */
function el(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, String(value));
  for (const child of children) node.append(typeof child === 'string' ? document.createTextNode(child) : child);
  return node;
}

function svg(tag, attributes = {}, ...children) {
  const node = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, String(value));
  for (const child of children) node.append(typeof child === 'string' ? document.createTextNode(child) : child);
  return node;
}

/** `2026-11-28 15:03:07 UTC`, or `fallback` for null. */
function when(iso, fallback = 'never') {
  if (iso === null || iso === undefined) return fallback;
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? String(iso) : `${date.toISOString().slice(0, 19).replace('T', ' ')} UTC`;
}

/** A problem answer as one line of text: status, title, detail. */
function problemText(reply) {
  const data = reply.data && typeof reply.data === 'object' ? reply.data : {};
  const parts = [String(reply.status)];
  if (typeof data.title === 'string') parts.push(data.title);
  if (typeof data.detail === 'string') parts.push(data.detail);
  return parts.join(' — ');
}

function keyState(record) {
  if (record.revokedAt !== null) return `revoked ${when(record.revokedAt)}`;
  if (record.expiresAt !== null && new Date(record.expiresAt).getTime() <= Date.now()) return `expired ${when(record.expiresAt)}`;
  return 'active';
}

function describeLimits(limits) {
  if (limits === null || limits === undefined || limits.length === 0) return "the server's default";
  return limits
    .map((limit) => `${limit.name ?? 'default'}: ${limit.limit} per ${limit.windowSeconds} s${limit.burst ? `, burst ${limit.burst}` : ''}${limit.mode === 'observe' ? ' (observed: counted, never refusing)' : ''}`)
    .join('; ');
}

function describeQuota(quota) {
  if (quota === null || quota === undefined) return 'none';
  const refill = quota.refill ? `, refilled with ${quota.refill.amount} ${quota.refill.interval}` : '';
  const next = quota.nextRefillAt ? ` (next refill ${when(quota.nextRefillAt)})` : '';
  const observed = quota.mode === 'observe' ? ' (observed: counted, never refusing)' : '';
  return `${quota.remaining} credits left${refill}${next}${observed}`;
}

/** Served requests: allowed, and those an observed (shadow) limit would have refused. */
function served(outcome) {
  return outcome === 'allowed' || outcome.startsWith('would_refuse_');
}

/** A key's roles as the console shows them: its own, then its owner's. */
function describeRoles(held) {
  const own = held.roles.length === 0 ? 'none' : held.roles.join(', ');
  return held.inheritedRoles.length === 0 ? own : `${own}; from its owner: ${held.inheritedRoles.join(', ')}`;
}

function describeLeak(record) {
  if (!record.leakedAt) return 'none reported';
  return record.leakUrl ? `reported leaked ${when(record.leakedAt)}, found at ${record.leakUrl}` : `reported leaked ${when(record.leakedAt)} (no location given)`;
}

/** The console, wired to the page's elements. */
function createConsole() {
  const state = { key: null, keys: [], keysTruncated: false, owners: [], ownersTruncated: false, roles: [], current: null, held: null, owner: null };

  function setStatus(text, kind = 'info') {
    const status = $('status');
    status.textContent = text;
    status.className = kind;
  }

  /** One call to the admin API with the admin key; the answer's JSON (or nothing). */
  async function api(method, path, body) {
    const headers = { authorization: `ApiKey ${state.key}`, accept: 'application/json, application/problem+json' };
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
      // The key was revoked or mistyped: back to the key form.
      signOut();
      setStatus(`The admin key was refused: ${problemText(reply)}`, 'error');
      throw new SignedOut();
    }
    return reply;
  }

  /** Every page of a list, up to MAX_PAGES; `truncated` when more remained. */
  async function loadAll(path) {
    const items = [];
    let url = `${path}?limit=${PAGE_SIZE}`;
    for (let page = 0; page < MAX_PAGES; page += 1) {
      const reply = await api('GET', url);
      if (!reply.ok) throw new Error(problemText(reply));
      items.push(...reply.data.items);
      if (!reply.data.nextCursor) return { items, truncated: false };
      url = `${path}?limit=${PAGE_SIZE}&cursor=${encodeURIComponent(reply.data.nextCursor)}`;
    }
    return { items, truncated: true };
  }

  async function signIn(key) {
    state.key = key;
    const reply = await api('GET', '/api/keys?limit=1');
    if (!reply.ok) {
      state.key = null;
      setStatus(`This key cannot manage keys: ${problemText(reply)}`, 'error');
      return false;
    }
    sessionStorage.setItem(KEY_STORAGE, key);
    $('admin-last4').textContent = key.slice(-4);
    $('login').hidden = true;
    $('signed-in').hidden = false;
    return true;
  }

  function signOut() {
    sessionStorage.removeItem(KEY_STORAGE);
    state.key = null;
    state.keys = [];
    state.owners = [];
    state.roles = [];
    state.current = null;
    state.owner = null;
    hideNewKey();
    $('keys-table').tBodies[0].replaceChildren();
    $('owners-table').tBodies[0].replaceChildren();
    $('roles-table').tBodies[0].replaceChildren();
    $('key-detail').hidden = true;
    $('owner-detail').hidden = true;
    $('signed-in').hidden = true;
    $('login').hidden = false;
    $('admin-key').focus();
  }

  // Keys: loaded whole (up to MAX_PAGES), filtered here as the operator types.
  async function loadKeys() {
    const { items, truncated } = await loadAll('/api/keys');
    state.keys = items;
    state.keysTruncated = truncated;
    renderKeys();
  }

  function keyMatches(record, query) {
    if (query === '') return true;
    const text = [record.name, record.id, record.ownerId ?? '', ...record.secrets.map((secret) => secret.last4)].join('\n').toLowerCase();
    return text.includes(query);
  }

  function renderKeys() {
    const query = $('key-search').value.trim().toLowerCase();
    const shown = state.keys.filter((record) => keyMatches(record, query));
    const rows = shown.map((record) => {
      const open = el('button', { type: 'button', class: 'link' }, record.name);
      open.addEventListener('click', () => void run(() => openKey(record.id)));
      return el(
        'tr',
        {},
        el('td', {}, open),
        el('td', { class: 'mono' }, record.id),
        el('td', {}, record.scopes.join(', ')),
        el('td', {}, record.ownerId ?? '—'),
        el('td', {}, keyState(record)),
        el('td', {}, when(record.lastUsedAt)),
      );
    });
    $('keys-table').tBodies[0].replaceChildren(...rows);
    const more = state.keysTruncated ? ` (the newest ${state.keys.length} are searched)` : '';
    $('keys-summary').textContent = `${shown.length} of ${state.keys.length} keys shown${more}.`;
  }

  async function loadOwners() {
    const { items, truncated } = await loadAll('/api/owners');
    state.owners = items;
    state.ownersTruncated = truncated;
    renderOwners();
  }

  function renderOwners() {
    const query = $('owner-search').value.trim().toLowerCase();
    const shown = state.owners.filter((owner) => query === '' || owner.id.toLowerCase().includes(query));
    const rows = shown.map((owner) => {
      const keys = el('button', { type: 'button' }, 'Show its keys');
      keys.setAttribute('aria-label', `Show the keys of ${owner.id}`);
      keys.addEventListener('click', () => {
        const search = $('key-search');
        search.value = owner.id;
        renderKeys();
        search.focus();
      });
      const usage = el('button', { type: 'button' }, 'Show its usage');
      usage.setAttribute('aria-label', `Show the usage of ${owner.id}`);
      usage.addEventListener('click', () => void run(() => openOwner(owner)));
      return el(
        'tr',
        {},
        el('td', { class: 'mono' }, owner.id),
        el('td', {}, owner.disabledAt ? `disabled ${when(owner.disabledAt)}` : 'enabled'),
        el('td', {}, when(owner.createdAt)),
        el('td', {}, keys, ' ', usage),
      );
    });
    $('owners-table').tBodies[0].replaceChildren(...rows);
    const more = state.ownersTruncated ? ` (the newest ${state.owners.length} are searched)` : '';
    $('owners-summary').textContent = `${shown.length} of ${state.owners.length} owners shown${more}.`;
  }

  // Roles: few (the server keeps at most 1000), listed whole in one answer.
  async function loadRoles() {
    const reply = await api('GET', '/api/roles');
    if (!reply.ok) throw new Error(problemText(reply));
    state.roles = reply.data.items;
    const rows = state.roles.map((role) =>
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
    $('roles-summary').textContent = `${state.roles.length} roles.`;
  }

  // One key: its record, its requests, its audit trail, and what can be done to it.
  async function openKey(id) {
    const reply = await api('GET', `/api/keys/${encodeURIComponent(id)}`);
    if (!reply.ok) {
      setStatus(`Could not open the key: ${problemText(reply)}`, 'error');
      return;
    }
    // Its roles and what they come to, beside the record (a failure leaves the record shown).
    const roles = await api('GET', `/api/keys/${encodeURIComponent(id)}/roles`);
    renderKey(reply.data, roles.ok ? roles.data : null);
    const section = $('key-detail');
    section.hidden = false;
    section.focus();
    setStatus(`Key ${reply.data.name} opened.`);
    await Promise.all([loadUsage(), loadAudit()]);
  }

  /** `held`: the key's roles (`GET /api/keys/{id}/roles`); a re-render after a rotation keeps those read on opening. */
  function renderKey(record, held = state.held) {
    state.current = record;
    state.held = held;
    $('key-heading').textContent = `Key: ${record.name}`;
    const fields = [
      ['Id', record.id],
      ['State', keyState(record)],
      ['Scopes', record.scopes.join(', ') || 'none of its own'],
      ['Roles', held === null ? 'could not be read' : describeRoles(held)],
      ['Permissions', held === null ? 'could not be read' : held.permissions.join(', ') || 'none'],
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
      ['Secrets', record.secrets.map((secret) => `…${secret.last4} (created ${when(secret.createdAt)}, last used ${when(secret.lastUsedAt)}, expires ${when(secret.expiresAt, 'never')})`).join('; ')],
    ];
    $('key-fields').replaceChildren(...fields.flatMap(([name, value]) => [el('dt', {}, name), el('dd', {}, value)]));
    const revoked = record.revokedAt !== null;
    $('revoke-open').disabled = revoked;
    for (const control of $('rotate-form').elements) control.disabled = revoked;
  }

  async function loadUsage() {
    const record = state.current;
    if (record === null) return;
    await drawUsage(`/api/keys/${encodeURIComponent(record.id)}/usage`, 'usage');
  }

  // One owner's usage. It is counted by owner id, so it includes keys of an earlier owner
  // deleted under the same id: the note above the chart says so, with this owner's creation.
  async function openOwner(owner) {
    state.owner = owner;
    $('owner-heading').textContent = `Owner: ${owner.id}`;
    $('owner-usage-note').textContent =
      `Usage is counted by owner id: it includes the requests of every key issued for ${owner.id}, ` +
      `also keys of an earlier owner deleted under this id. This owner was created ${when(owner.createdAt)}.`;
    const section = $('owner-detail');
    section.hidden = false;
    section.focus();
    setStatus(`Owner ${owner.id} opened.`);
    await loadOwnerUsage();
  }

  async function loadOwnerUsage() {
    const owner = state.owner;
    if (owner === null) return;
    await drawUsage(`/api/owners/${encodeURIComponent(owner.id)}/usage`, 'owner-usage');
  }

  /** A usage route's answer for the period chosen in `#<ids>-period`, drawn into `#<ids>-summary`, `-figure` and `-chart`. */
  async function drawUsage(path, ids) {
    const month = $(`${ids}-period`).value === 'month';
    const query = month ? `interval=day&from=${encodeURIComponent(new Date(Date.now() - 30 * DAY_MS).toISOString())}` : 'interval=hour';
    const reply = await api('GET', `${path}?${query}`);
    const chart = $(`${ids}-chart`);
    if (reply.status === 404) {
      chart.replaceChildren();
      $(`${ids}-figure`).hidden = true;
      $(`${ids}-summary`).textContent = 'Usage not available on this server.';
      return;
    }
    if (!reply.ok) {
      chart.replaceChildren();
      $(`${ids}-figure`).hidden = true;
      $(`${ids}-summary`).textContent = `Usage could not be read: ${problemText(reply)}`;
      return;
    }
    const sum = (requests, keep) => Object.entries(requests).filter(([outcome]) => keep(outcome)).reduce((total, [, count]) => total + count, 0);
    const buckets = reply.data.buckets.map((bucket) => ({ start: bucket.start, allowed: sum(bucket.requests, served), refused: sum(bucket.requests, (o) => !served(o)) }));
    const allowed = buckets.reduce((total, bucket) => total + bucket.allowed, 0);
    const refused = buckets.reduce((total, bucket) => total + bucket.refused, 0);
    const totals = Object.entries(reply.data.totals.requests).filter(([, count]) => count > 0);
    const reasons = totals.filter(([outcome]) => !served(outcome)).map(([outcome, count]) => `${outcome} ${count}`);
    // Served all the same: what observed (shadow) limits would have refused, by reason.
    const wouldBe = totals.filter(([outcome]) => outcome.startsWith('would_refuse_')).map(([outcome, count]) => `${outcome.slice('would_refuse_'.length)} ${count}`);
    $(`${ids}-summary`).textContent =
      `${month ? 'Last month, by day' : 'Last day, by hour'}: ${allowed} allowed, ${refused} refused${reasons.length > 0 ? ` (${reasons.join(', ')})` : ''}` +
      `${wouldBe.length > 0 ? `; observed limits would have refused ${wouldBe.reduce((total, text) => total + Number(text.split(' ')[1]), 0)} of the allowed (${wouldBe.join(', ')})` : ''}.`;
    $(`${ids}-figure`).hidden = false;
    chart.replaceChildren(usageChart(buckets, month, `${ids}-summary`));
  }

  async function loadAudit() {
    const record = state.current;
    if (record === null) return;
    const reply = await api('GET', `/api/audit?target=${encodeURIComponent(record.id)}&limit=50`);
    const list = $('audit-list');
    if (reply.status === 404) {
      list.replaceChildren();
      $('audit-summary').textContent = 'Audit trail not available on this server.';
      return;
    }
    if (!reply.ok) {
      list.replaceChildren();
      $('audit-summary').textContent = `The audit trail could not be read: ${problemText(reply)}`;
      return;
    }
    const items = reply.data.items;
    $('audit-summary').textContent = items.length === 0 ? 'Nothing recorded yet.' : `${items.length} most recent entries, newest first.`;
    list.replaceChildren(...items.map(auditEntry));
  }

  async function issue(form) {
    const scopes = [...form.querySelectorAll('input[name="scopes"]:checked')].map((input) => input.value);
    const body = { name: $('issue-name').value, scopes };
    const owner = $('issue-owner').value.trim();
    if (owner !== '') body.ownerId = owner;
    const reply = await api('POST', '/api/keys', body);
    if (!reply.ok) {
      setStatus(`The key was not issued: ${problemText(reply)}`, 'error');
      return;
    }
    const { key, ...record } = reply.data;
    form.reset();
    await loadKeys();
    await openKey(record.id);
    showNewKey(key, `Key ${record.name} issued.`);
  }

  async function rotate() {
    const record = state.current;
    const overlapSeconds = Number($('rotate-overlap').value);
    const reply = await api('POST', `/api/keys/${encodeURIComponent(record.id)}/rotate`, { overlapSeconds });
    if (!reply.ok) {
      setStatus(`The key was not rotated: ${problemText(reply)}`, 'error');
      return;
    }
    const { key, ...rotated } = reply.data;
    renderKey(rotated);
    showNewKey(key, `Key ${rotated.name} rotated.`);
    await Promise.all([loadKeys(), loadAudit()]);
  }

  async function revoke() {
    const record = state.current;
    const reply = await api('DELETE', `/api/keys/${encodeURIComponent(record.id)}`);
    if (!reply.ok) {
      setStatus(`The key was not revoked: ${problemText(reply)}`, 'error');
      return;
    }
    await loadKeys();
    await openKey(record.id);
    setStatus(`Key ${record.name} revoked: requests with it are refused from now on.`);
  }

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

  /** Runs an action, reporting a failure in the status line. */
  async function run(action) {
    try {
      await action();
    } catch (error) {
      if (error instanceof SignedOut) return;
      setStatus(`Something went wrong: ${error instanceof Error ? error.message : String(error)}`, 'error');
    }
  }

  function wire() {
    $('login-form').addEventListener('submit', (event) => {
      event.preventDefault();
      const input = $('admin-key');
      const key = input.value.trim();
      input.value = '';
      if (key === '') return;
      void run(async () => {
        if (await signIn(key)) {
          setStatus('Admin key accepted. Loading keys and owners…');
          await Promise.all([loadKeys(), loadOwners(), loadRoles()]);
          setStatus(`Signed in: ${state.keys.length} keys and ${state.owners.length} owners loaded.`);
          $('key-search').focus();
        }
      });
    });
    $('forget-key').addEventListener('click', () => {
      signOut();
      setStatus('The admin key is forgotten.');
    });
    $('key-search').addEventListener('input', renderKeys);
    $('owner-search').addEventListener('input', renderOwners);
    $('reload-keys').addEventListener('click', () => void run(async () => {
      await loadKeys();
      setStatus(`${state.keys.length} keys loaded.`);
    }));
    $('reload-roles').addEventListener('click', () => void run(async () => {
      await loadRoles();
      setStatus(`${state.roles.length} roles loaded.`);
    }));
    $('reload-owners').addEventListener('click', () => void run(async () => {
      await loadOwners();
      setStatus(`${state.owners.length} owners loaded.`);
    }));
    $('issue-form').addEventListener('submit', (event) => {
      event.preventDefault();
      void run(() => issue(event.currentTarget));
    });
    $('new-key-done').addEventListener('click', () => {
      hideNewKey();
      setStatus('The new key is hidden.');
    });
    $('usage-period').addEventListener('change', () => void run(loadUsage));
    $('reload-usage').addEventListener('click', () => void run(loadUsage));
    $('owner-usage-period').addEventListener('change', () => void run(loadOwnerUsage));
    $('reload-owner-usage').addEventListener('click', () => void run(loadOwnerUsage));
    $('rotate-form').addEventListener('submit', (event) => {
      event.preventDefault();
      void run(rotate);
    });
    const dialog = $('revoke-dialog');
    $('revoke-open').addEventListener('click', () => {
      const record = state.current;
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

  async function start() {
    wire();
    const saved = sessionStorage.getItem(KEY_STORAGE);
    if (saved === null) {
      $('admin-key').focus();
      return;
    }
    await run(async () => {
      if (await signIn(saved)) {
        await Promise.all([loadKeys(), loadOwners()]);
        setStatus(`Signed in: ${state.keys.length} keys and ${state.owners.length} owners loaded.`);
      }
    });
  }

  return { start };
}

/** One audit entry as a list item: when, what, who, and each change before → after. */
function auditEntry(entry) {
  const item = el('li', {}, el('span', { class: 'when' }, when(entry.at)), ' ', el('strong', {}, String(entry.action)), ` by ${entry.actor}`);
  const changes = Object.entries(entry.changes ?? {});
  if (changes.length > 0) {
    item.append(el('ul', {}, ...changes.map(([field, change]) => el('li', {}, `${field}: ${JSON.stringify(change?.before ?? null)} → ${JSON.stringify(change?.after ?? null)}`))));
  }
  return item;
}

/** Bars of allowed (below) and refused (above) requests per bucket, drawn with SVG elements. */
function usageChart(buckets, daily, labelledBy) {
  const width = 720;
  const height = 200;
  const left = 44;
  const bottom = 24;
  const top = 8;
  const plotWidth = width - left - 8;
  const plotHeight = height - bottom - top;
  const max = Math.max(1, ...buckets.map((bucket) => bucket.allowed + bucket.refused));
  const step = plotWidth / Math.max(1, buckets.length);
  const barWidth = Math.max(1, step * 0.8);
  const label = (iso) => (daily ? new Date(iso).toISOString().slice(0, 10) : `${new Date(iso).toISOString().slice(5, 16).replace('T', ' ')} UTC`);
  const chart = svg('svg', { viewBox: `0 0 ${width} ${height}`, role: 'img', 'aria-labelledby': labelledBy, class: 'chart' });
  chart.append(
    svg('line', { x1: left, y1: top + plotHeight, x2: width - 8, y2: top + plotHeight, class: 'axis' }),
    svg('text', { x: left - 6, y: top + 10, 'text-anchor': 'end', class: 'tick' }, String(max)),
    svg('text', { x: left - 6, y: top + plotHeight, 'text-anchor': 'end', class: 'tick' }, '0'),
  );
  buckets.forEach((bucket, i) => {
    const x = left + i * step + (step - barWidth) / 2;
    const allowedHeight = (bucket.allowed / max) * plotHeight;
    const refusedHeight = (bucket.refused / max) * plotHeight;
    const group = svg('g', { class: 'bucket' }, svg('title', {}, `${label(bucket.start)}: ${bucket.allowed} allowed, ${bucket.refused} refused`));
    if (bucket.allowed > 0) group.append(svg('rect', { x, y: top + plotHeight - allowedHeight, width: barWidth, height: allowedHeight, class: 'allowed' }));
    if (bucket.refused > 0) {
      group.append(svg('rect', { x, y: top + plotHeight - allowedHeight - refusedHeight, width: barWidth, height: refusedHeight, class: 'refused' }));
    }
    chart.append(group);
  });
  if (buckets.length > 0) {
    chart.append(
      svg('text', { x: left, y: height - 6, 'text-anchor': 'start', class: 'tick' }, label(buckets[0].start)),
      svg('text', { x: width - 8, y: height - 6, 'text-anchor': 'end', class: 'tick' }, label(buckets[buckets.length - 1].start)),
    );
  }
  return chart;
}

void createConsole().start();
