/**
 * The GraphQL Cursor Connections Specification's own examples (https://relay.dev/graphql/connections.htm),
 * sent as written to a real graphql-yoga server over HTTP whose schema is made with
 * `connectionTypeDefs`: the introductory `friends(first: 10, after: "opaqueCursor")` query
 * and the three introspection queries with the responses the specification gives. The
 * PageInfo response is the current text's (facebook/relay pull request 2655): `startCursor`
 * and `endCursor` are nullable, null on an empty connection. The specification's algorithm
 * itself, every combination of first/after/last/before, is a property test in
 * packages/core (paginator.slice.prop.test.ts); its cases one by one are in connection.test.ts.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createPaginator, paginateArray } from '@keyset/core';
import { createSchema, createYoga } from 'graphql-yoga';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connection, connectionTypeDefs, planConnection, type ConnectionArgs } from './index.ts';

interface Friend {
  id: string;
  name: string;
}
const FRIENDS: Friend[] = Array.from({ length: 25 }, (_, i) => ({ id: `user-${String(i + 1).padStart(2, '0')}`, name: `Friend ${i + 1}` }));
const friends = createPaginator<Friend>({ endpoint: 'User.friends', sort: [{ key: 'id', dir: 'asc', type: 'string', unique: true }], cursor: { secrets: ['a-cursor-secret-of-at-least-32-characters!'] } });

const typeDefs = /* GraphQL */ `
  type User { id: ID! name: String! friends(first: Int, after: String, last: Int, before: String): UserConnection! }
  type Example { id: ID! }
  ${connectionTypeDefs('User')}
  ${connectionTypeDefs('Example', { pageInfo: false })}
  type Query { user: User! examples(first: Int, after: String, last: Int, before: String): ExampleConnection! }
`;
const resolvers = {
  Query: {
    user: () => ({ id: 'user-00', name: 'Me' }),
    examples: async (_: unknown, args: ConnectionArgs) => connection(friends, await planConnection(friends, args), []),
  },
  User: {
    friends: async (_: unknown, args: ConnectionArgs) => {
      const plan = await planConnection(friends, args);
      return connection(friends, plan, paginateArray(FRIENDS, plan, plan.sort).rows);
    },
  },
};

let server: Server;
let url: string;
beforeAll(async () => {
  server = createServer(createYoga({ schema: createSchema({ typeDefs, resolvers }), logging: false }));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/graphql`;
});
afterAll(() => new Promise<void>((resolve) => server?.close(() => resolve())));

async function post(query: string): Promise<{ data?: unknown; errors?: { message: string; extensions?: Record<string, unknown> }[] }> {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query }) });
  expect(response.status).toBe(200);
  return (await response.json()) as never;
}

/** The specification's introspection query for one type, as written. */
const introspect = (type: string) => `{
  __type(name: "${type}") {
    fields {
      name
      type {
        name
        kind
        ofType {
          name
          kind
        }
      }
    }
  }
}`;
type FieldType = { name: string | null; kind: string; ofType: { name: string | null; kind: string } | null };
async function fields(type: string): Promise<Record<string, FieldType>> {
  const body = (await post(introspect(type))) as { data: { __type: { fields: { name: string; type: FieldType }[] } } };
  return Object.fromEntries(body.data.__type.fields.map((f) => [f.name, f.type]));
}

/**
 * A field type with its outermost Non-Null wrapper taken off. The specification allows one
 * on `node` and `cursor` in words ("or a Non-Null wrapper around one of those types") and
 * on `edges` by requiring only "a list type that wraps an edge type"; keyset's SDL declares
 * `edges: [ExampleEdge!]!` and `node: Example!`, so a client never checks for nulls that
 * cannot occur. The one level of `ofType` the query asks for then shows the list.
 */
const nullable = (t: FieldType): { name: string | null; kind: string } => (t.kind === 'NON_NULL' ? t.ofType! : { name: t.name, kind: t.kind });

describe('the specification\'s examples, as written, against a schema of connectionTypeDefs', () => {
  it('the introductory query: first: 10 slices, a cursor on every edge is what `after` takes to page from that edge, hasNextPage says whether more exist', async () => {
    const query = (after: string) => `{
  user {
    id
    name
    friends(first: 10, after: ${JSON.stringify(after)}) {
      edges {
        cursor
        node {
          id
          name
        }
      }
      pageInfo {
        hasNextPage
      }
    }
  }
}`;
    type Result = { data: { user: { id: string; name: string; friends: { edges: { cursor: string; node: Friend }[]; pageInfo: { hasNextPage: boolean } } } } };
    // The opaque cursor of the example is a cursor this server never issued: keyset refuses
    // it (where ApplyCursorsToEdges would ignore it and restart from the first edge).
    const opaque = await post(query('opaqueCursor'));
    expect(opaque.errors?.map((e) => e.extensions?.code)).toEqual(['invalid_cursor']);

    const first = (await post('{ user { friends(first: 3) { edges { cursor } } } }')) as { data: { user: { friends: { edges: { cursor: string }[] } } } };
    const start = first.data.user.friends.edges[2]!.cursor;
    const page = ((await post(query(start))) as Result).data.user;
    expect(page.id).toBe('user-00');
    expect(page.friends.edges.map((e) => e.node)).toEqual(FRIENDS.slice(3, 13));
    expect(page.friends.pageInfo.hasNextPage).toBe(true);
    // Each edge's cursor pages on from that edge.
    for (const [i, edge] of page.friends.edges.entries()) {
      const next = ((await post(query(edge.cursor))) as Result).data.user.friends;
      expect(next.edges[0]?.node).toEqual(FRIENDS[3 + i + 1]);
      expect(next.pageInfo.hasNextPage).toBe(3 + i + 1 + 10 < FRIENDS.length);
    }
  });

  it('Connection Types, introspection: pageInfo as the response gives it (a non-null PageInfo); edges a list of ExampleEdge', async () => {
    const got = await fields('ExampleConnection');
    expect(got.pageInfo).toEqual({ name: null, kind: 'NON_NULL', ofType: { name: 'PageInfo', kind: 'OBJECT' } });
    expect(nullable(got.edges!)).toEqual({ name: null, kind: 'LIST' });
    const edges = (await post('{ __type(name: "ExampleConnection") { fields { name type { ofType { ofType { ofType { name kind } } } } } } }')) as { data: { __type: { fields: { name: string; type: { ofType: { ofType: { ofType: unknown } } } }[] } } };
    expect(edges.data.__type.fields.find((f) => f.name === 'edges')?.type.ofType.ofType.ofType).toEqual({ name: 'ExampleEdge', kind: 'OBJECT' });
  });

  it('Edge Types, introspection: node an Example object, cursor a non-null String as the response gives it', async () => {
    const got = await fields('ExampleEdge');
    expect(nullable(got.node!)).toEqual({ name: 'Example', kind: 'OBJECT' });
    expect(got.cursor).toEqual({ name: null, kind: 'NON_NULL', ofType: { name: 'String', kind: 'SCALAR' } });
  });

  it('PageInfo, introspection: the response the specification gives, field for field', async () => {
    expect(await fields('PageInfo')).toEqual({
      hasNextPage: { name: null, kind: 'NON_NULL', ofType: { name: 'Boolean', kind: 'SCALAR' } },
      hasPreviousPage: { name: null, kind: 'NON_NULL', ofType: { name: 'Boolean', kind: 'SCALAR' } },
      startCursor: { name: 'String', kind: 'SCALAR', ofType: null },
      endCursor: { name: 'String', kind: 'SCALAR', ofType: null },
    });
  });

  it('an empty connection: no edges, null startCursor and endCursor, no page either way', async () => {
    const body = (await post('{ examples(first: 10) { edges { cursor } pageInfo { hasNextPage hasPreviousPage startCursor endCursor } } }')) as { data: unknown };
    expect(body.data).toEqual({ examples: { edges: [], pageInfo: { hasNextPage: false, hasPreviousPage: false, startCursor: null, endCursor: null } } });
  });
});
