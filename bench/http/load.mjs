// Load generator, run as its own process so it never shares a core's event loop with
// the server: `node bench/http/load.mjs '<json options>'` prints autocannon's result JSON.
import autocannon from 'autocannon';

const options = JSON.parse(process.argv[2]);
const result = await autocannon({ ...options, renderProgressBar: false, renderResultsTable: false });
process.stdout.write(JSON.stringify({
  requests: result.requests.average,
  latencyP50: result.latency.p50,
  latencyP99: result.latency.p99,
  non2xx: result.non2xx,
  errors: result.errors,
  timeouts: result.timeouts,
  total: result.requests.total,
}));
