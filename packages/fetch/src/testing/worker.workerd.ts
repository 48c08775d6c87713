/**
 * Module worker bundled and run by `workerd serve`: the conformance app as the worker's
 * `fetch`, with memory stores living in the isolate. Test support only.
 * @module
 */
import { conformanceServer } from './conformance-server.ts';

export default { fetch: conformanceServer() };
