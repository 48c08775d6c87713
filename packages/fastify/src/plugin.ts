/**
 * The Fastify plugin: declares `request.apiKey`, `request.page` and `reply.sendPage()`,
 * and installs the problem error handler and not-found handler on the app it is
 * registered on (`fastify-plugin`: no encapsulation).
 * @module
 */
import type { PagePlan, VerifiedKey } from '@keyset/core';
import type { FastifyPluginCallback, FastifyReply } from 'fastify';
import fp from 'fastify-plugin';
import { sendPage } from './paginate.ts';
import type { SendPageOptions } from './paginate.ts';
import { notFoundHandler, problemHandler } from './problem-handler.ts';
import type { ProblemHandlerOptions } from './problem-handler.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** The caller, set by `apiKey()`. Safe to log: the key shows as its last 4 characters. */
    apiKey: VerifiedKey;
    /** This request's page plan, set by `paginate()`: pass it to your source. */
    page: PagePlan;
  }
  interface FastifyReply {
    /** Sends `rows` (fetched with `request.page`) as the page, with its `Link` header. */
    sendPage<Row>(rows: readonly Row[], options?: SendPageOptions): Promise<FastifyReply>;
  }
}

/** Options of the plugin. */
export interface KeysetPluginOptions extends ProblemHandlerOptions {
  /**
   * Install `problemHandler()` and `notFoundHandler()` on the app. Turn off to install
   * your own (call `problemHandler()` from it for keyset's errors).
   * @default true
   */
  handlers?: boolean;
}

const plugin: FastifyPluginCallback<KeysetPluginOptions> = (app, options, done) => {
  const { handlers = true, onError, typeBase } = options;
  // Fastify 5 wants reference-typed request decorations to start as null; the types say
  // what a route behind apiKey()/paginate() reads (as Hono's c.var does).
  app.decorateRequest('apiKey', null as never);
  app.decorateRequest('page', null as never);
  app.decorateReply('sendPage', function sendPageDecoration<Row>(this: FastifyReply, rows: readonly Row[], sendOptions?: SendPageOptions) {
    return sendPage(this, rows, sendOptions);
  });
  if (handlers) {
    const problemOptions = { ...(onError !== undefined && { onError }), ...(typeBase !== undefined && { typeBase }) };
    app.setErrorHandler(problemHandler(problemOptions));
    app.setNotFoundHandler(notFoundHandler(typeBase === undefined ? {} : { typeBase }));
  }
  done();
};

/**
 * Registers keyset on a Fastify 5 app.
 *
 * @example
 * ```ts
 * const app = Fastify({ frameworkErrors: problemHandler() });
 * await app.register(keyset, { onError: (err, request, status) => status >= 500 && request.log.error(err) });
 * app.get('/orders', { onRequest: apiKey({ guard, scopes: ['orders:read'] }), preHandler: paginate(orders) }, async (request, reply) =>
 *   reply.sendPage(await listOrders(request.page)),
 * );
 * ```
 */
export const keyset: FastifyPluginCallback<KeysetPluginOptions> = fp(plugin, { fastify: '5.x', name: '@keyset/fastify' });
