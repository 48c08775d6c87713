/**
 * The acknowledgement protocol over an in-process channel (the buses' own tests run it over
 * real Redis and PostgreSQL): who waits for whom, and what a silent instance costs.
 */
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../errors.ts';
import { createRevocationProtocol, type RevocationProtocol, type RevocationPublished } from './revocation-protocol.ts';

/** A broadcast channel: every send reaches every subscribed instance on a later tick. */
function channel() {
  const members = new Set<RevocationProtocol>();
  const deliver = (message: string): number => {
    for (const m of members) setTimeout(() => m.receive(message), 1);
    return members.size;
  };
  return { members, deliver };
}

function member(ch: ReturnType<typeof channel>, options: { subscribed?: boolean; ackTimeoutMs?: number; mute?: boolean } = {}) {
  const evicted: string[] = [];
  const warnings: Record<string, unknown>[] = [];
  const published: RevocationPublished[] = [];
  const protocol = createRevocationProtocol({
    invalidate: (id) => void evicted.push(id),
    sendAck: async (ack) => (options.mute ? undefined : ch.deliver(ack)),
    ackTimeoutMs: options.ackTimeoutMs ?? 200,
    logger: { warn: (f) => void warnings.push(f) },
    onPublished: (event) => void published.push(event),
  });
  if (options.subscribed !== false) ch.members.add(protocol);
  return { protocol, evicted, warnings, published, publish: (id: string) => protocol.publish({ type: 'revoked', id }, async (m) => ch.deliver(m)) };
}

describe('createRevocationProtocol', () => {
  it('resolves once every other instance evicted, without a warning', async () => {
    const ch = channel();
    const a = member(ch);
    const b = member(ch);
    const c = member(ch);
    await a.publish('key_1');
    expect([a.evicted, b.evicted, c.evicted]).toEqual([[], ['key_1'], ['key_1']]);
    expect(a.warnings).toEqual([]);
  });

  it('waits ackTimeoutMs for an instance that never answers, then names how many did not', async () => {
    const ch = channel();
    const a = member(ch, { ackTimeoutMs: 50 });
    member(ch);
    member(ch, { mute: true });
    await a.publish('key_1');
    expect(a.warnings).toEqual([{ type: 'revoked', id: 'key_1', instances: 2, unacknowledged: 1 }]);
  });

  it('tells onPublished the lag of each publish: every other instance confirmed, or the wait ran out with some silent', async () => {
    const ch = channel();
    const a = member(ch, { ackTimeoutMs: 60 });
    member(ch);
    member(ch);
    await a.publish('key_1');
    expect(a.published).toEqual([{ type: 'revoked', lagMs: expect.any(Number), instances: 2, unacknowledged: 0 }]);
    const mute = member(ch, { mute: true });
    await a.publish('key_2');
    expect(a.published[1]).toMatchObject({ instances: 3, unacknowledged: 1 });
    // Timed out: the wait (60 ms on a timer that may fire late, never early) is in the lag.
    expect(a.published[1]!.lagMs).toBeGreaterThanOrEqual(59);
    ch.members.delete(mute.protocol);
  });

  it('does not resolve early, mistaking another instance for itself, when its own subscriber is not listening', async () => {
    const ch = channel();
    const a = member(ch, { subscribed: false, ackTimeoutMs: 50 });
    const b = member(ch);
    member(ch, { mute: true });
    await a.publish('key_1');
    expect(b.evicted).toEqual(['key_1']);
    expect(a.warnings).toEqual([{ type: 'revoked', id: 'key_1', instances: 2, unacknowledged: 2, subscribed: false }]);
  });

  it('ignores junk and acknowledgements meant for someone else', async () => {
    const ch = channel();
    const a = member(ch);
    for (const junk of ['', '[]', 'null', '{"v":1}', '{"v":1,"origin":"x","type":"deleted","id":"k"}', '{"v":1,"origin":"x","ack":1,"to":"y"}', 'x'.repeat(5000)]) {
      a.protocol.receive(junk);
    }
    expect(a.evicted).toEqual([]);
    a.protocol.receive(JSON.stringify({ v: 1, origin: 'other', type: 'updated', id: 'key_2' }));
    expect(a.evicted).toEqual(['key_2']);
  });

  it('refuses a malformed event and bad options', async () => {
    const ch = channel();
    const a = member(ch);
    await expect(a.protocol.publish({ type: 'deleted' as never, id: 'k' }, async () => 0)).rejects.toThrow(ConfigError);
    expect(() => createRevocationProtocol({ invalidate: () => undefined, sendAck: async () => undefined, ackTimeoutMs: -1 })).toThrow(ConfigError);
  });
});
