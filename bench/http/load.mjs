// Load generator, run as its own process so it never shares a core's event loop with
// the server: `node bench/http/load.mjs <options.json>` prints a summary of autocannon's
// result as JSON. The options file holds autocannon's options plus `keys` and `paths`:
// request n carries keys[n·7919 mod K] and asks for paths[n mod P], so consecutive
// requests differ in both and every (key, page) pairing recurs only after K·P requests.
import { readFileSync } from 'node:fs';
import autocannon from 'autocannon';

const { keys, paths, ...options } = JSON.parse(readFileSync(process.argv[2], 'utf8'));
let n = 0;
const result = await autocannon({
  ...options,
  requests: [
    {
      method: 'GET',
      setupRequest(req) {
        const i = n++;
        req.path = paths[i % paths.length];
        req.headers = { authorization: `ApiKey ${keys[(i * 7919) % keys.length]}` };
        return req;
      },
    },
  ],
  renderProgressBar: false,
  renderResultsTable: false,
});
process.stdout.write(JSON.stringify({
  requests: result.requests.average,
  latencyP50: result.latency.p50,
  latencyP99: result.latency.p99,
  non2xx: result.non2xx,
  errors: result.errors,
  timeouts: result.timeouts,
  total: result.requests.total,
}));
