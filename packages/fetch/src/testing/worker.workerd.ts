/**
 * Module worker bundled and run by `workerd serve`: the conformance app as the worker's
 * `fetch`, with memory stores living in the isolate. Test support only.
 * @module
 */
import { conformanceServer } from './conformance-server.ts';

// workerd tells a worker nothing about the socket peer (Cloudflare's edge sets
// `cf-connecting-ip`, a local workerd does not): keys with an IP allowlist are refused.
export default { fetch: conformanceServer() };
