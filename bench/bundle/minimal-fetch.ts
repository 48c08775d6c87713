/**
 * The smallest useful keyset app on a Web-standard runtime: a keyring on a memory store,
 * an API-key guard, one paginator, and @keyset/fetch's apiKey/paginate/sendPage/
 * problemHandler. `pnpm bench bundle-size` bundles it with esbuild
 * (`--bundle --minify --platform=neutral`) and reports its size; test/bundle-size.test.ts
 * holds it to a ceiling (bench/bundle/measure.ts).
 */
import { createApiKeyGuard, createKeyring, createMemoryKeyStore, createPaginator, cursorSecrets } from '@keyset/core';
import { apiKey, paginate, problemHandler, sendPage } from '@keyset/fetch';

interface Order {
  id: number;
}

const keyring = createKeyring({ store: createMemoryKeyStore(), prefix: 'acme_live' });
const guard = createApiKeyGuard({ keyring });
const orders = createPaginator<Order>({
  endpoint: 'GET /orders',
  sort: [{ key: 'id', dir: 'asc', type: 'int', unique: true }],
  cursor: { secrets: cursorSecrets(undefined, { development: true }) },
});
const rows: Order[] = Array.from({ length: 100 }, (_, i) => ({ id: i + 1 }));

export const GET = problemHandler()(
  apiKey({ guard, scopes: ['orders:read'] })(async (request) => {
    const page = await paginate(request, orders);
    return sendPage(page, rows.slice(0, page.take));
  }),
);
