// A usage panel (a key's or an owner's): the period chosen in `#<ids>-period`, read from a
// usage route and drawn into `#<ids>-summary`, `#<ids>-figure` and `#<ids>-chart`.

import { $ } from './dom.js';
import { problemText } from './format.js';
import { usageChart } from './usage-chart.js';

const DAY_MS = 86_400_000;

/** Served requests: allowed, and those an observed (shadow) limit would have refused. */
const served = (outcome) => outcome === 'allowed' || outcome.startsWith('would_refuse_');
const sum = (requests, keep) => Object.entries(requests).filter(([outcome]) => keep(outcome)).reduce((total, [, n]) => total + n, 0);

/** Sums each bucket's requests into allowed (served) and refused (every other outcome). */
function bars(buckets) {
  return buckets.map((bucket) => ({ start: bucket.start, allowed: sum(bucket.requests, served), refused: sum(bucket.requests, (o) => !served(o)) }));
}

/** Reads `path` (a usage route) for the chosen period and draws it into the panel `ids`. */
export async function drawUsage(api, path, ids) {
  const month = $(`${ids}-period`).value === 'month';
  const query = month ? `interval=day&from=${encodeURIComponent(new Date(Date.now() - 30 * DAY_MS).toISOString())}` : 'interval=hour';
  const reply = await api.call('GET', `${path}?${query}`);
  const chart = $(`${ids}-chart`);
  if (!reply.ok) {
    chart.replaceChildren();
    $(`${ids}-figure`).hidden = true;
    // A 404: a server without the usage routes.
    $(`${ids}-summary`).textContent = reply.status === 404 ? 'Usage not available on this server.' : `Usage could not be read: ${problemText(reply)}`;
    return;
  }
  const buckets = bars(reply.data.buckets);
  const allowed = buckets.reduce((sum, bucket) => sum + bucket.allowed, 0);
  const refused = buckets.reduce((sum, bucket) => sum + bucket.refused, 0);
  const totals = Object.entries(reply.data.totals.requests).filter(([, n]) => n > 0);
  const reasons = totals.filter(([outcome]) => !served(outcome)).map(([outcome, n]) => `${outcome} ${n}`);
  // Served all the same: what observed (shadow) limits would have refused, by reason.
  const wouldBe = totals.filter(([outcome]) => outcome.startsWith('would_refuse_'));
  const observed = wouldBe.length === 0 ? '' : `; observed limits would have refused ${wouldBe.reduce((total, [, n]) => total + n, 0)} of the allowed (${wouldBe.map(([outcome, n]) => `${outcome.slice('would_refuse_'.length)} ${n}`).join(', ')})`;
  $(`${ids}-summary`).textContent = `${month ? 'Last month, by day' : 'Last day, by hour'}: ${allowed} allowed, ${refused} refused${reasons.length > 0 ? ` (${reasons.join(', ')})` : ''}${observed}.`;
  $(`${ids}-figure`).hidden = false;
  chart.replaceChildren(usageChart(buckets, month, `${ids}-summary`));
}
