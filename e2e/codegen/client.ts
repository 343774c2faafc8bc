// A typed client of both APIs: REST through openapi-fetch with the types
// openapi-typescript wrote from /v1/openapi.json (rest.ts), GraphQL through
// fetch with the documents graphql-codegen typed from the schema (gql/).
import createClient from 'openapi-fetch';
import type { paths } from './rest.js';
import { graphql } from './gql/index.js';
import type { ItemsQuery, TypedDocumentString } from './gql/graphql.js';

// run logs in with an API key, then creates and lists keys and items on
// each API. It works on its own scratch data: the keys and items it makes
// are revoked and deleted before it ends, and the name it sets is the one
// the user has, so that running it leaves the account as it found it.
export async function run(base: string, apiKey: string): Promise<void> {
  // REST: paths, parameters, bodies and answers are checked against the
  // OpenAPI description; error is the failure envelope.
  const login = await createClient<paths>({ baseUrl: `${base}/v1` }).POST('/auth/login', {
    body: { api_key: apiKey },
  });
  if (login.error) throw new Error(login.error.error.message);
  const token: string = login.data.data.access_token;

  const rest = createClient<paths>({
    baseUrl: `${base}/v1`,
    headers: { Authorization: `Bearer ${token}` },
  });
  const created = await rest.POST('/items', { body: { name: 'First item', description: 'hello' } });
  if (created.error) throw new Error(created.error.error.message);
  const id: string = created.data.data.id;

  // Every active item, newest first, a page at a time by cursor.
  let cursor: string | undefined;
  do {
    const list = await rest.GET('/items', {
      params: { query: { limit: 50, status: 'active', sort: 'created_at', order: 'desc', cursor } },
    });
    if (list.error) throw new Error(list.error.error.message);
    for (const item of list.data.data) console.log(item.id, item.name, item.created_at);
    cursor = list.data.meta.pagination.next_cursor ?? undefined;
  } while (cursor);

  // GraphQL: each graphql() document below is typed, its variables and its
  // result; enums are string unions, Time and Cursor strings.
  const { me } = await execute(base, token, Me, {});
  const role: 'USER' | 'ADMIN' = me.role;
  const disabled: boolean = me.disabled;
  console.log(me.email, role, disabled);

  // A user changes their own name, on each API (role and disabled: admins);
  // here to the name they have.
  const renamed = await rest.PUT('/users/{id}', { params: { path: { id: me.id } }, body: { name: me.name } });
  if (renamed.error) throw new Error(renamed.error.error.message);
  const restName: string = renamed.data.data.name;
  const { updateUser } = await execute(base, token, RenameMe, { id: me.id, input: { name: me.name } });
  console.log(restName, updateUser.name);

  // A user makes API keys (the secret is in this answer only: keep it now)
  // and lists their own, on each API; scopes are read and write on REST,
  // READ and WRITE on GraphQL.
  const key = await rest.POST('/keys', { body: { label: 'CI', scopes: ['read'] } });
  if (key.error) throw new Error(key.error.error.message);
  const secret: string = key.data.data.key;
  const keys = await rest.GET('/keys', { params: { query: { limit: 20 } } });
  if (keys.error) throw new Error(keys.error.error.message);
  for (const k of keys.data.data) console.log(k.id, k.prefix, k.label, k.scopes.join(','), k.revoked_at);
  const { createAPIKey } = await execute(base, token, CreateKey, { input: { label: 'laptop', scopes: ['READ'] } });
  const gqlSecret: string | null | undefined = createAPIKey.key;
  const { apiKeys } = await execute(base, token, Keys, { first: 20 });
  for (const { node } of apiKeys.edges) {
    const scopes: ('READ' | 'WRITE')[] = node.scopes;
    console.log(node.id, node.prefix, node.label, scopes.join(','), node.revokedAt);
  }
  console.log(secret.startsWith(key.data.data.prefix), gqlSecret?.startsWith(createAPIKey.prefix), apiKeys.totalCount);

  // A key works until it is revoked: the two made here are, one on each API.
  const revoked = await rest.DELETE('/keys/{id}', { params: { path: { id: key.data.data.id } } });
  if (revoked.error) throw new Error(revoked.error.error.message);
  const { revokeAPIKey } = await execute(base, token, RevokeKey, { id: createAPIKey.id });
  console.log(revoked.data.data.revoked, revokeAPIKey.revokedAt !== null);

  const made = await execute(base, token, CreateItem, { input: { name: 'Second item' } });
  const status: 'ACTIVE' | 'ARCHIVED' = made.createItem.status;
  await execute(base, token, UpdateItem, { id, input: { status: 'ARCHIVED' } });
  console.log(made.createItem.id, status);

  let after: string | null = null;
  do {
    // Named (the loop's narrowing of after would make it refer to itself).
    const page: ItemsQuery = await execute(base, token, Items, { first: 50, after });
    for (const { node } of page.items.edges) {
      const createdAt: string = node.createdAt;
      console.log(node.id, node.name, node.status, createdAt);
    }
    after = page.items.pageInfo.hasNextPage ? page.items.pageInfo.endCursor : null;
  } while (after);

  // The two items made here go too, one on each API.
  const deleted = await rest.DELETE('/items/{id}', { params: { path: { id } } });
  if (deleted.error) throw new Error(deleted.error.error.message);
  const { deleteItem } = await execute(base, token, DeleteItem, { id: made.createItem.id });
  console.log(deleted.data.data.id, deleteItem);
}

// neverRun holds what must not compile.
export async function neverRun(base: string, token: string): Promise<void> {
  // @ts-expect-error createItem(input: {}): CreateItemInput.name is required
  await execute(base, token, CreateItem, { input: {} });
}

const Me = graphql(`
  query Me {
    me {
      id
      email
      name
      role
      disabled
    }
  }
`);

const RenameMe = graphql(`
  mutation RenameMe($id: ID!, $input: UpdateUserInput!) {
    updateUser(id: $id, input: $input) {
      id
      name
    }
  }
`);

const CreateKey = graphql(`
  mutation CreateKey($input: CreateAPIKeyInput!) {
    createAPIKey(input: $input) {
      id
      prefix
      key
    }
  }
`);

const RevokeKey = graphql(`
  mutation RevokeKey($id: ID!) {
    revokeAPIKey(id: $id) {
      id
      revokedAt
    }
  }
`);

const Keys = graphql(`
  query Keys($first: Int, $after: Cursor) {
    apiKeys(first: $first, after: $after) {
      totalCount
      edges {
        node {
          id
          prefix
          label
          scopes
          revokedAt
        }
      }
    }
  }
`);

const CreateItem = graphql(`
  mutation CreateItem($input: CreateItemInput!) {
    createItem(input: $input) {
      id
      name
      status
      createdAt
    }
  }
`);

const UpdateItem = graphql(`
  mutation UpdateItem($id: ID!, $input: UpdateItemInput!) {
    updateItem(id: $id, input: $input) {
      id
      status
      updatedAt
    }
  }
`);

const DeleteItem = graphql(`
  mutation DeleteItem($id: ID!) {
    deleteItem(id: $id)
  }
`);

const Items = graphql(`
  query Items($first: Int, $after: Cursor) {
    items(first: $first, after: $after) {
      totalCount
      pageInfo {
        hasNextPage
        endCursor
      }
      edges {
        node {
          id
          name
          status
          createdAt
        }
      }
    }
  }
`);

// execute sends a typed document to /graphql and returns its data, or
// throws the first error (its extensions.code is the REST error code).
async function execute<TResult, TVariables>(
  base: string,
  token: string,
  document: TypedDocumentString<TResult, TVariables>,
  variables: TVariables,
): Promise<TResult> {
  const res = await fetch(`${base}/graphql`, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      Accept: 'application/graphql-response+json',
      Authorization: `Bearer ${token}`,
    },
    body: JSON.stringify({ query: document.toString(), variables }),
  });
  const body = (await res.json()) as {
    data?: TResult | null;
    errors?: { message: string; extensions?: { code?: string } }[];
  };
  if (body.errors?.length || body.data == null) {
    const e = body.errors?.[0];
    throw new Error(`${e?.extensions?.code ?? res.status}: ${e?.message ?? 'no data'}`);
  }
  return body.data;
}
