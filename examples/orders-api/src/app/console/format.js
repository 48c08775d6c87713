// How the console words what the API returns: plain functions of the records, no DOM.

/** `2026-11-28 15:03:07 UTC`, or `fallback` for null. */
export function when(iso, fallback = 'never') {
  if (iso === null || iso === undefined) return fallback;
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? String(iso) : `${date.toISOString().slice(0, 19).replace('T', ' ')} UTC`;
}

/** `1 key`, `2 keys`: a count with its noun in the number it needs. */
export function count(n, singular, plural = `${singular}s`) {
  return `${n} ${n === 1 ? singular : plural}`;
}

/** A problem answer as one line of text: status, title, detail. */
export function problemText(reply) {
  const data = reply.data && typeof reply.data === 'object' ? reply.data : {};
  const parts = [String(reply.status)];
  if (typeof data.title === 'string') parts.push(data.title);
  if (typeof data.detail === 'string') parts.push(data.detail);
  return parts.join(' — ');
}

export function keyState(record) {
  if (record.revokedAt !== null) return `revoked ${when(record.revokedAt)}`;
  if (record.expiresAt !== null && new Date(record.expiresAt).getTime() <= Date.now()) return `expired ${when(record.expiresAt)}`;
  return 'active';
}

export function describeLimits(limits) {
  if (limits === null || limits === undefined || limits.length === 0) return "the server's default";
  return limits
    .map((limit) => `${limit.name ?? 'default'}: ${limit.limit} per ${limit.windowSeconds} s${limit.burst ? `, burst ${limit.burst}` : ''}${limit.mode === 'observe' ? ' (observed: counted, never refusing)' : ''}`)
    .join('; ');
}

export function describeQuota(quota) {
  if (quota === null || quota === undefined) return 'none';
  const refill = quota.refill ? `, refilled with ${quota.refill.amount} ${quota.refill.interval}` : '';
  const next = quota.nextRefillAt ? ` (next refill ${when(quota.nextRefillAt)})` : '';
  const observed = quota.mode === 'observe' ? ' (observed: counted, never refusing)' : '';
  return `${quota.remaining} credits left${refill}${next}${observed}`;
}

/** A key's roles as the console shows them: its own, then its owner's. */
export function describeRoles(held) {
  const own = held.roles.length === 0 ? 'none' : held.roles.join(', ');
  return held.inheritedRoles.length === 0 ? own : `${own}; from its owner: ${held.inheritedRoles.join(', ')}`;
}

export function describeLeak(record) {
  if (!record.leakedAt) return 'none reported';
  return record.leakUrl ? `reported leaked ${when(record.leakedAt)}, found at ${record.leakUrl}` : `reported leaked ${when(record.leakedAt)} (no location given)`;
}

export function describeSecrets(secrets) {
  return secrets.map((secret) => `…${secret.last4} (created ${when(secret.createdAt)}, last used ${when(secret.lastUsedAt)}, expires ${when(secret.expiresAt, 'never')})`).join('; ');
}
