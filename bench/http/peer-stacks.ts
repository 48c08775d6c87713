/**
 * The stacks a user would assemble from today's popular middleware instead of keyset:
 * Hono + hono/bearer-auth (ApiKey prefix) + hono-rate-limiter, and
 * Express + passport-headerapikey + express-rate-limit. Limits are set high enough
 * that no request is refused: the benchmark measures cost, not refusals.
 */
import express, { type Express } from 'express';
import { rateLimit } from 'express-rate-limit';
import { Hono } from 'hono';
import { bearerAuth } from 'hono/bearer-auth';
import { rateLimiter } from 'hono-rate-limiter';
import passport from 'passport';
import { HeaderAPIKeyStrategy } from 'passport-headerapikey';
import { BENCH_KEY, plainPage } from './orders.ts';

const keys = new Map([[BENCH_KEY, { id: 'key_1', scopes: ['orders:read'] }]]);

export function honoPeer(): Hono {
  const app = new Hono();
  app.use(
    '/api/*',
    bearerAuth({
      prefix: 'ApiKey',
      verifyToken: (token) => keys.has(token),
    }),
  );
  app.use(
    '/api/*',
    rateLimiter({ windowMs: 60_000, limit: 1_000_000_000, standardHeaders: 'draft-7', keyGenerator: (c) => keys.get(c.req.header('authorization')!.slice(7))!.id }),
  );
  app.get('/api/orders', (c) => c.json(plainPage(c.req.query('cursor'))));
  return app;
}

export function expressPeer(): Express {
  passport.use(
    new HeaderAPIKeyStrategy({ header: 'Authorization', prefix: 'ApiKey ' }, false, (apiKey, done) => {
      const key = keys.get(apiKey);
      done(null, key ?? false);
    }),
  );
  const app = express();
  app.use(passport.initialize());
  app.use('/api', passport.authenticate('headerapikey', { session: false }));
  app.use(
    '/api',
    rateLimit({
      windowMs: 60_000,
      limit: 1_000_000_000,
      standardHeaders: 'draft-7',
      legacyHeaders: false,
      keyGenerator: (req) => (req.user as { id: string }).id,
    }),
  );
  app.get('/api/orders', (req, res) => {
    res.json(plainPage(typeof req.query.cursor === 'string' ? req.query.cursor : null));
  });
  return app;
}
