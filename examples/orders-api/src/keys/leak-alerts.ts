/**
 * GitHub's secret-scanning alerts (`LEAK_ALERT_PATH`, `LEAK_ALERT_POLICY`, docs/security.md):
 * `@keyset/core`'s Fetch-style handler, mounted on the Node server ahead of the adapter. It
 * records each reported key's leak on its record, which `GET /api/keys/{id}`, the key list
 * and `keys show`/`keys list` show. One mount serves
 * all four adapters alike and needs none of their body parsing: the signature covers the
 * raw bytes, which the handler reads itself. Any other request goes to the adapter.
 * @module
 */
import type { IncomingMessage, RequestListener, Server, ServerResponse } from 'node:http';
import { getRequestListener } from '@hono/node-server';
import { createKeyAdmin, createLeakAlertHandler, type Keyring } from '@keyset/core';
import type { Config } from '../config.ts';
import type { Logger } from '../logger.ts';
import { nodeServerErrorResponse } from '../node-fetch-server.ts';

/** Answers `POST <config.leakAlertPath>` on `server` with the alert handler, when the path is set. */
export function mountLeakAlerts(server: Server, keyring: Keyring, config: Config, logger: Logger): void {
  const path = config.leakAlertPath;
  if (path === undefined) return;
  const log = logger.child({ component: 'secret-scanning' });
  const handler = createLeakAlertHandler({
    keyring,
    // Every leak recorded (and revocation, with the revoke policy) is audited as `secret-scanning`.
    admin: createKeyAdmin(keyring, { actor: 'secret-scanning' }),
    publicKeys: config.leakAlertKeysUrl,
    policy: config.leakAlertPolicy,
    // One line per alert, `warn` when it reported a live key, naming each such key by id
    // and last four characters (never its text); where GitHub found it is on the key's
    // record (`leakUrl`), which the handler has written by then. No `onLeak` line per key:
    // an alert of 256 keys is one line, not 257.
    logger: log,
  });
  const alerts = getRequestListener(handler, { errorHandler: nodeServerErrorResponse });
  // The adapter's listener stays the only one for every other request (Node's documented
  // EventEmitter API: the server emits 'request' to its listeners).
  const adapter = server.listeners('request') as RequestListener[];
  server.removeAllListeners('request');
  server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    if (request.method === 'POST' && request.url === path) return void alerts(request, response);
    for (const listener of adapter) listener.call(server, request, response);
  });
}
