/**
 * The stacks a user would assemble from today's popular middleware instead of keyset:
 * Hono + hono/bearer-auth (ApiKey prefix) + hono-rate-limiter, and
 * Express + passport-headerapikey + express-rate-limit. Both look the raw key up in a
 * `Map` (plaintext keys) and page with an unsigned base64 JSON cursor. Limits are set
 * high enough that no request is refused: the benchmark measures cost, not refusals.
 */
import { generateKey } from '@keyset/core';
import express, { type Express } from 'express';
import { rateLimit } from 'express-rate-limit';
import { Hono } from 'hono';
import { bearerAuth } from 'hono/bearer-auth';
import { rateLimiter } from 'hono-rate-limiter';
import passport from 'passport';
import { HeaderAPIKeyStrategy } from 'passport-headerapikey';
import { BENCH_PREFIX, KEY_COUNT, plainPage, statusOf } from './orders.ts';

/** `count` keys of keyset's format (the peers do not check it), each with its identity. */
export function peerKeys(count = KEY_COUNT): { keys: string[]; byKey: Map<string, { id: string; scopes: string[] }> } {
  const keys = Array.from({ length: count }, () => generateKey(BENCH_PREFIX));
  return { keys, byKey: new Map(keys.map((key, i) => [key, { id: `key_${i}`, scopes: ['orders:read'] }])) };
}

export function honoPeer(count?: number): { app: Hono; keys: string[] } {
  const { keys, byKey } = peerKeys(count);
  const app = new Hono();
  app.use(
    '/api/*',
    bearerAuth({
      prefix: 'ApiKey',
      verifyToken: (token) => byKey.has(token),
    }),
  );
  app.use(
    '/api/*',
    rateLimiter({ windowMs: 60_000, limit: 1_000_000_000, standardHeaders: 'draft-7', keyGenerator: (c) => byKey.get(c.req.header('authorization')!.slice(7))!.id }),
  );
  app.get('/api/orders', (c) => c.json(plainPage(c.req.query('cursor'), statusOf(c.req.query('status')))));
  return { app, keys };
}

export function expressPeer(count?: number): { app: Express; keys: string[] } {
  const { keys, byKey } = peerKeys(count);
  passport.use(
    new HeaderAPIKeyStrategy({ header: 'Authorization', prefix: 'ApiKey ' }, false, (apiKey, done) => {
      const key = byKey.get(apiKey);
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
    res.json(plainPage(typeof req.query.cursor === 'string' ? req.query.cursor : null, statusOf(typeof req.query.status === 'string' ? req.query.status : null)));
  });
  return { app, keys };
}
