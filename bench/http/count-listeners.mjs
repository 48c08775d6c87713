// Preloaded into a benchmark server by profile-server.mjs (count mode): counts the timers
// and listeners the process adds (a once() is counted again as the on() it makes). The first SIGUSR2 starts the window, the second writes
// the counts in it to COUNT_OUT.
import { EventEmitter } from 'node:events';
import { writeFileSync } from 'node:fs';

const counts = { setTimeout: 0, setImmediate: 0, 'process.nextTick': 0, 'on / addListener': 0, once: 0, removeListener: 0, "'close' listeners": 0, "'finish' listeners": 0 };
function count(target, name, key, onCall) {
  const original = target[name];
  target[name] = function (...args) {
    counts[key]++;
    onCall?.(args[0]);
    return original.apply(this, args);
  };
}
const byEvent = (event) => {
  if (event === 'close') counts["'close' listeners"]++;
  if (event === 'finish') counts["'finish' listeners"]++;
};
count(globalThis, 'setTimeout', 'setTimeout');
count(globalThis, 'setImmediate', 'setImmediate');
count(process, 'nextTick', 'process.nextTick');
count(EventEmitter.prototype, 'on', 'on / addListener', byEvent);
EventEmitter.prototype.addListener = EventEmitter.prototype.on;
count(EventEmitter.prototype, 'once', 'once', byEvent);
count(EventEmitter.prototype, 'removeListener', 'removeListener');

let start;
process.on('SIGUSR2', () => {
  if (start === undefined) {
    start = { ...counts };
    return;
  }
  writeFileSync(process.env.COUNT_OUT, JSON.stringify(Object.fromEntries(Object.keys(counts).map((k) => [k, counts[k] - start[k]]))));
});
