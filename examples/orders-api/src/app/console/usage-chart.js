// The usage chart: bars of allowed (below) and refused (above) requests per bucket, drawn
// with SVG elements (no canvas, no library), each bucket titled with its figures.

import { svg } from './dom.js';

const WIDTH = 720;
const HEIGHT = 200;
const LEFT = 44;
const RIGHT = 8;
const BOTTOM = 24;
const TOP = 8;

/** `buckets`: `{ start, allowed, refused }` each; `daily` labels days, else hours; `labelledBy` names the chart. */
export function usageChart(buckets, daily, labelledBy) {
  const plotWidth = WIDTH - LEFT - RIGHT;
  const plotHeight = HEIGHT - BOTTOM - TOP;
  const base = TOP + plotHeight;
  const max = Math.max(1, ...buckets.map((bucket) => bucket.allowed + bucket.refused));
  const step = plotWidth / Math.max(1, buckets.length);
  const barWidth = Math.max(1, step * 0.8);
  const label = (iso) => (daily ? new Date(iso).toISOString().slice(0, 10) : `${new Date(iso).toISOString().slice(5, 16).replace('T', ' ')} UTC`);
  const tick = (x, y, anchor, text) => svg('text', { x, y, 'text-anchor': anchor, class: 'tick' }, text);
  const chart = svg('svg', { viewBox: `0 0 ${WIDTH} ${HEIGHT}`, role: 'img', 'aria-labelledby': labelledBy, class: 'chart' });
  chart.append(svg('line', { x1: LEFT, y1: base, x2: WIDTH - RIGHT, y2: base, class: 'axis' }), tick(LEFT - 6, TOP + 10, 'end', String(max)), tick(LEFT - 6, base, 'end', '0'));
  buckets.forEach((bucket, i) => {
    const x = LEFT + i * step + (step - barWidth) / 2;
    const allowedHeight = (bucket.allowed / max) * plotHeight;
    const refusedHeight = (bucket.refused / max) * plotHeight;
    const group = svg('g', { class: 'bucket' }, svg('title', {}, `${label(bucket.start)}: ${bucket.allowed} allowed, ${bucket.refused} refused`));
    if (bucket.allowed > 0) group.append(svg('rect', { x, y: base - allowedHeight, width: barWidth, height: allowedHeight, class: 'allowed' }));
    if (bucket.refused > 0) group.append(svg('rect', { x, y: base - allowedHeight - refusedHeight, width: barWidth, height: refusedHeight, class: 'refused' }));
    chart.append(group);
  });
  if (buckets.length > 0) {
    chart.append(tick(LEFT, HEIGHT - 6, 'start', label(buckets[0].start)), tick(WIDTH - RIGHT, HEIGHT - 6, 'end', label(buckets[buckets.length - 1].start)));
  }
  return chart;
}
