/**
 * Scopes per field or per operation type, declared by schema coordinate: which scopes an
 * operation needs, from the fields it selects (through fragments), and the refusal when the
 * key lacks some. Shared by the graphql-yoga plugin and the Apollo Server plugin.
 * @module
 */
import { ConfigError, type VerifiedKey } from '@keyset/core';
import { missingScopes } from '@keyset/core/adapter';
import { GraphQLError, getNamedType, isInterfaceType, isObjectType, type DocumentNode, type FragmentDefinitionNode, type GraphQLNamedType, type GraphQLSchema, type OperationDefinitionNode, type SelectionSetNode } from 'graphql';

/** Scopes by schema coordinate: `'Query.orders'` for one field, `'Mutation'` for every field of a type. */
export type FieldScopes = Readonly<Record<string, readonly string[]>>;

/** Throws a `ConfigError` naming `factory` for a coordinate that is not one or a value that is not a list of scopes. */
export function assertFieldScopes(factory: string, fieldScopes: FieldScopes): void {
  if (typeof fieldScopes !== 'object' || fieldScopes === null) throw new ConfigError(`${factory}() fieldScopes must be an object of schema coordinates`);
  for (const [coordinate, needed] of Object.entries(fieldScopes)) {
    if (!/^[_A-Za-z][_0-9A-Za-z]*(\.[_A-Za-z][_0-9A-Za-z]*)?$/.test(coordinate)) throw new ConfigError(`${factory}() fieldScopes: ${JSON.stringify(coordinate)} is not a type name or a Type.field coordinate`);
    if (!Array.isArray(needed) || needed.some((s) => typeof s !== 'string')) throw new ConfigError(`${factory}() fieldScopes['${coordinate}'] must be a list of scopes`);
  }
}

/**
 * The `insufficient_scope` error (HTTP 403, `missing_scopes`) when the operation selects a
 * field whose declared scopes `key` lacks, else `undefined`.
 */
export function scopeRefusal(key: VerifiedKey, schema: GraphQLSchema, document: DocumentNode, operationName: string | null | undefined, fieldScopes: FieldScopes): GraphQLError | undefined {
  if (Object.keys(fieldScopes).length === 0) return undefined;
  const missing = missingScopes(key.scopes, requiredScopes(schema, document, operationName, fieldScopes));
  if (missing.length === 0) return undefined;
  return new GraphQLError(`This operation needs the scopes ${missing.join(', ')}, which the API key does not hold.`, { extensions: { code: 'insufficient_scope', missing_scopes: missing, http: { status: 403 } } });
}

/** The scopes the operation's selected fields need, following fragments, by schema coordinate. */
function requiredScopes(schema: GraphQLSchema, document: DocumentNode, operationName: string | null | undefined, fieldScopes: FieldScopes): string[] {
  const operations = document.definitions.filter((d): d is OperationDefinitionNode => d.kind === 'OperationDefinition');
  const operation = operationName == null ? (operations.length === 1 ? operations[0] : undefined) : operations.find((o) => o.name?.value === operationName);
  if (operation === undefined) return [];
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const d of document.definitions) if (d.kind === 'FragmentDefinition') fragments.set(d.name.value, d);
  const required = new Set<string>();
  const seen = new Set<string>();
  const visit = (type: GraphQLNamedType | null | undefined, selections: SelectionSetNode): void => {
    for (const selection of selections.selections) {
      if (selection.kind === 'Field') {
        if (type === null || type === undefined || !(isObjectType(type) || isInterfaceType(type))) continue;
        const name = selection.name.value;
        for (const s of fieldScopes[type.name] ?? []) required.add(s);
        for (const s of fieldScopes[`${type.name}.${name}`] ?? []) required.add(s);
        const field = type.getFields()[name];
        if (field !== undefined && selection.selectionSet !== undefined) visit(getNamedType(field.type), selection.selectionSet);
      } else if (selection.kind === 'InlineFragment') {
        visit(selection.typeCondition === undefined ? type : schema.getType(selection.typeCondition.name.value), selection.selectionSet);
      } else {
        const fragment = fragments.get(selection.name.value);
        if (fragment === undefined || seen.has(fragment.name.value)) continue;
        seen.add(fragment.name.value);
        visit(schema.getType(fragment.typeCondition.name.value), fragment.selectionSet);
      }
    }
  };
  visit(schema.getRootType(operation.operation), operation.selectionSet);
  return [...required];
}
